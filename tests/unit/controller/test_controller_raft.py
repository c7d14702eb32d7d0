"""The controller on the real Raft core: 3 voters in memory, a leader killed mid-run.

Each voter runs a ``RaftDriver`` over ``MemoryRaftStorage`` with a
``MetadataListener`` and a ``QuorumController`` attached, as the broker will.
Messages go through a small in-process network (delivered in order; a killed
node neither sends nor receives). Whatever node leads runs the controller: its
records are appended to its Raft log and must reach every image.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Callable
from typing import TypeVar

import pytest

from log_engine.controller import (
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerConfig,
    ControllerResult,
    NewTopic,
    QuorumController,
    TopicOutcome,
)
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.metadata.records import Endpoint, decode_record, encode_record
from log_engine.metadata.snapshot import encode_snapshot
from log_engine.replication.raft import MemoryRaftStorage, RaftDriver, Role
from log_engine.replication.raft.messages import RaftMessage
from log_engine.replication.raft.types import LeaderAndEpoch
from tests.unit.replication.raft.helpers import config

T = TypeVar("T")
VOTERS = (1, 2, 3)
STEP_MS = 10


class Voter:
    """One controller node: storage that outlives restarts, and a process on top."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.storage = MemoryRaftStorage()
        self.snapshots_loaded = 0

    def start(self, now_ms: int) -> list[RaftMessage]:
        """A new process on this node's storage."""
        self.listener = MetadataListener()
        self.listener.subscribe(self._count_snapshots)
        self.controller = QuorumController(
            ControllerConfig(node_id=self.node_id, broker_session_timeout_ms=60_000),
            random.Random(self.node_id),
        )
        self.controller.attach(self.listener)
        self.driver = RaftDriver(
            config(self.node_id, VOTERS),
            self.storage,
            self.listener,
            now_ms,
            random.Random(now_ms + self.node_id),
        )
        return self.driver.start()

    def _count_snapshots(self, update: MetadataUpdate) -> None:
        self.snapshots_loaded += update.snapshot


class Cluster:
    def __init__(self) -> None:
        self.now_ms = 0
        self.voters = {n: Voter(n) for n in VOTERS}
        self.alive = set(VOTERS)
        self.queue: deque[RaftMessage] = deque()
        for voter in self.voters.values():
            self.send(voter.start(0))

    def send(self, messages: list[RaftMessage]) -> None:
        self.queue.extend(messages)

    def step(self) -> None:
        self.now_ms += STEP_MS
        for n in sorted(self.alive):
            voter = self.voters[n]
            self.send(voter.driver.tick(self.now_ms))
            if voter.controller.is_leader:
                self.append(voter, voter.controller.tick(self.now_ms))
        for _ in range(1000):
            if not self.queue:
                break
            message = self.queue.popleft()
            if message.sender in self.alive and message.receiver in self.alive:
                self.send(self.voters[message.receiver].driver.handle(message, self.now_ms))

    def append(self, voter: Voter, result: ControllerResult[T]) -> T:
        if result.records:
            payloads = [encode_record(r) for r in result.records]
            _, messages = voter.driver.append(payloads, self.now_ms)
            self.send(messages)
        return result.response

    def run_until(self, done: Callable[[], bool], max_ms: int = 20_000) -> None:
        deadline = self.now_ms + max_ms
        while not done():
            assert self.now_ms < deadline, "the cluster did not get there in time"
            self.step()

    def active(self) -> Voter:
        self.run_until(lambda: any(self.voters[n].controller.is_active for n in self.alive))
        live = [self.voters[n] for n in sorted(self.alive)]
        return next(v for v in live if v.controller.is_active)

    def request(self, call: Callable[[QuorumController], ControllerResult[T]]) -> T:
        """Run a call on the active controller and wait until its records committed there."""
        voter = self.active()
        result = call(voter.controller)
        response = self.append(voter, result)
        self.run_until(lambda: voter.controller.pending_records == 0)
        return response

    def create(self, *topics: NewTopic) -> tuple[TopicOutcome, ...]:
        return self.request(lambda c: c.create_topics(topics, self.now_ms))

    def converged(self) -> bool:
        images = [self.voters[n].listener.image for n in sorted(self.alive)]
        return all(image == images[0] for image in images)

    def kill(self, node_id: int) -> None:
        self.alive.discard(node_id)

    def restart(self, node_id: int) -> None:
        self.alive.add(node_id)
        self.send(self.voters[node_id].start(self.now_ms))


def register_and_unfence(cluster: Cluster, broker_id: int) -> None:
    registration = BrokerRegistration(
        broker_id, uuid.UUID(int=broker_id), (Endpoint("PLAINTEXT", "127.0.0.1", 9090 + broker_id),)
    )
    reply = cluster.request(lambda c: c.register_broker(registration, cluster.now_ms))
    assert reply.error_code == 0, reply
    offset = cluster.active().listener.image.end_offset - 1
    heartbeat = BrokerHeartbeat(broker_id, reply.broker_epoch, offset)
    assert not cluster.request(lambda c: c.heartbeat(heartbeat, cluster.now_ms)).is_fenced


def setup_cluster() -> Cluster:
    cluster = Cluster()
    for broker_id in (1, 2, 3):
        register_and_unfence(cluster, broker_id)
    outcomes = cluster.create(NewTopic("orders", 3, 3), NewTopic("audit", 1, 2))
    assert [o.error_code for o in outcomes] == [0, 0]
    cluster.run_until(cluster.converged)
    return cluster


def test_every_voter_applies_the_controllers_records() -> None:
    cluster = setup_cluster()
    images = [v.listener.image for v in cluster.voters.values()]
    assert images[0] == images[1] == images[2]
    image = images[0]
    assert sorted(image.brokers) == [1, 2, 3]
    assert not any(b.fenced for b in image.brokers.values())
    assert sorted(image.topics) == ["audit", "orders"]
    assert len(image.topics["orders"].partitions) == 3
    # followers' controllers know the image but do not act
    followers = [v for v in cluster.voters.values() if not v.controller.is_leader]
    assert len(followers) == 2
    for follower in followers:
        assert follower.controller.committed_image == image
        assert follower.controller.create_topics([NewTopic("x", 1, 1)], 0).records == ()


def test_the_next_leader_continues_from_the_committed_image() -> None:
    cluster = setup_cluster()
    old = cluster.active()
    before = old.listener.image
    cluster.kill(old.node_id)
    new = cluster.active()
    assert new.node_id != old.node_id
    image = new.controller.image
    # nothing committed is lost: brokers, their epochs, topics, partitions
    assert image.registrations == before.registrations
    assert image.topics == before.topics
    # the new controller goes on: a topic, a producer-id block, a broker's heartbeat
    (outcome,) = cluster.create(NewTopic("later", 2, 2))
    assert outcome.error_code == 0
    (again,) = cluster.create(NewTopic("orders", 1, 1))
    assert again.error_code == 36  # TOPIC_ALREADY_EXISTS: the old leader's topic is known
    epoch = image.registrations[2].broker_epoch
    block = cluster.request(lambda c: c.allocate_producer_ids(2, epoch))
    assert block.error_code == 0
    heartbeat = BrokerHeartbeat(2, epoch, new.listener.image.end_offset - 1)
    assert cluster.request(lambda c: c.heartbeat(heartbeat, cluster.now_ms)).error_code == 0
    cluster.run_until(cluster.converged)
    # the old leader comes back (a new process on its storage) and catches up
    cluster.restart(old.node_id)
    cluster.run_until(cluster.converged)
    assert "later" in old.listener.image.topics
    assert old.listener.image == new.listener.image


def test_a_node_behind_a_snapshot_loads_it_and_converges() -> None:
    cluster = setup_cluster()
    leader = cluster.active()
    lagging = next(n for n in VOTERS if n != leader.node_id)
    cluster.kill(lagging)
    register_and_unfence(cluster, 4)
    cluster.create(NewTopic("more", 1, 3))
    end_offset, payload = leader.listener.snapshot()
    assert payload == encode_snapshot(leader.listener.image)
    cluster.send(leader.driver.create_snapshot(end_offset, payload))
    assert leader.driver.node.log.start_offset == end_offset
    cluster.restart(lagging)
    cluster.run_until(cluster.converged)
    behind = cluster.voters[lagging]
    assert behind.snapshots_loaded == 1  # it fetched the leader's snapshot
    assert behind.listener.image.topics.keys() == {"audit", "more", "orders"}
    assert 4 in behind.listener.image.brokers
    assert behind.driver.node.role is Role.FOLLOWER


def test_images_equal_the_log_replayed_from_empty() -> None:
    cluster = setup_cluster()
    leader = cluster.active()
    entries = [e for e in leader.storage.load().entries if not e.control]
    replayed = MetadataImage.EMPTY.apply_all(decode_record(e.payload) for e in entries)
    assert replayed.with_end_offset(leader.listener.image.end_offset) == leader.listener.image


def test_records_in_flight_when_the_leader_dies_commit_under_the_next_one() -> None:
    cluster = setup_cluster()
    old = cluster.active()
    result = old.controller.create_topics([NewTopic("in-flight", 1, 3)], cluster.now_ms)
    assert result.records
    cluster.append(old, result)
    # the followers get the entries, but the leader dies before it hears they have them
    for message in list(cluster.queue):
        if message.sender == old.node_id:
            cluster.send(cluster.voters[message.receiver].driver.handle(message, cluster.now_ms))
    cluster.queue.clear()
    assert not any("in-flight" in v.listener.image.topics for v in cluster.voters.values())
    # the moment a voter is elected, a request for the same topic arrives
    early: list[int] = []

    def on_leader(voter: Voter) -> Callable[[LeaderAndEpoch], None]:
        def elected(leader: LeaderAndEpoch) -> None:
            if leader.leader_id == voter.node_id:
                early.extend(_try_create(cluster, voter))

        return elected

    for voter in cluster.voters.values():
        if voter is not old:
            voter.listener.subscribe(lambda update: None, on_leader(voter))
    cluster.kill(old.node_id)
    new = cluster.active()  # its NoOp commits the old leader's entries first
    assert early and set(early) == {41}  # NOT_CONTROLLER until then
    assert "in-flight" in new.controller.image.topics
    (again,) = cluster.create(NewTopic("in-flight", 1, 1))
    assert again.error_code == 36  # TOPIC_ALREADY_EXISTS


def _try_create(cluster: Cluster, voter: Voter) -> list[int]:
    result = voter.controller.create_topics([NewTopic("in-flight", 1, 1)], cluster.now_ms)
    cluster.append(voter, result)
    return [o.error_code for o in result.response]


def test_records_lost_with_the_leader_can_be_sent_again() -> None:
    cluster = setup_cluster()
    old = cluster.active()
    cluster.append(old, old.controller.create_topics([NewTopic("lost", 1, 3)], cluster.now_ms))
    cluster.queue.clear()  # nothing left the leader
    cluster.kill(old.node_id)
    new = cluster.active()
    assert "lost" not in new.controller.image.topics  # never acknowledged, so not lost data
    (outcome,) = cluster.create(NewTopic("lost", 1, 2))
    assert outcome.error_code == 0
    cluster.restart(old.node_id)  # its uncommitted tail is truncated on rejoining
    cluster.run_until(cluster.converged)
    assert old.listener.image.topics["lost"].topic_id == outcome.topic_id


class LossyCluster(Cluster):
    """Drops and duplicates messages; the nemesis kills and restarts voters."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.loss = 0.05
        super().__init__()

    def send(self, messages: list[RaftMessage]) -> None:
        for message in messages:
            if self.rng.random() < self.loss:
                continue
            self.queue.append(message)
            if self.rng.random() < 0.02:
                self.queue.append(message)


@pytest.mark.parametrize("seed", range(5))
def test_seeded_faults_lose_no_committed_metadata(seed: int) -> None:
    """Message loss and duplication, voters killed and restarted (about 6 kills a run),
    the active controller registering brokers and creating topics throughout: every
    topic any voter ever committed is in the final image, and every log replays to it."""
    run_with_faults(seed)


def run_with_faults(seed: int) -> None:
    rng = random.Random(seed)
    cluster = LossyCluster(rng)
    committed_topics: set[str] = set()
    created = 0
    for _ in range(2500):
        cluster.step()
        roll = rng.random()
        if roll < 0.003 and len(cluster.alive) == 3:
            cluster.kill(rng.choice(sorted(cluster.alive)))
        elif roll < 0.01 and len(cluster.alive) < 3:
            cluster.restart(rng.choice(sorted(set(VOTERS) - cluster.alive)))
        actives = [cluster.voters[n] for n in sorted(cluster.alive)]
        active = next((v for v in actives if v.controller.is_active), None)
        if active is not None and rng.random() < 0.05:
            created += 1
            topic = NewTopic(f"t{created}", 1, 1)
            broker = rng.randrange(1, 4)
            registration = BrokerRegistration(broker, uuid.UUID(int=broker), ())
            cluster.append(active, active.controller.register_broker(registration, cluster.now_ms))
            if active.controller.image.unfenced_broker_ids():
                cluster.append(active, active.controller.create_topics([topic], cluster.now_ms))
            for b, reg in active.controller.image.registrations.items():
                heartbeat = BrokerHeartbeat(b, reg.broker_epoch, 1 << 40)
                cluster.append(active, active.controller.heartbeat(heartbeat, cluster.now_ms))
        for n in cluster.alive:
            committed_topics |= set(cluster.voters[n].listener.image.topics)
    cluster.loss = 0.0
    for n in set(VOTERS) - cluster.alive:
        cluster.restart(n)
    cluster.run_until(lambda: cluster.converged() and bool(cluster.active()))
    final = cluster.voters[1].listener.image
    assert committed_topics <= set(final.topics), f"seed {seed}: committed topics lost"
    assert len(committed_topics) > 3, f"seed {seed}: too little happened to judge"
    for voter in cluster.voters.values():
        entries = [e for e in voter.storage.load().entries if not e.control]
        snapshot = voter.storage.load().snapshot
        assert snapshot is None  # no snapshots in this run: the log is whole
        replayed = MetadataImage.EMPTY.apply_all(decode_record(e.payload) for e in entries)
        assert replayed.topics == final.topics and replayed.registrations == final.registrations
