"""A seeded, simulated network of Raft nodes with faults, and the invariants it checks.

Everything random comes from one ``random.Random(seed)``, so a failing run replays
from its seed. Time is a global simulated clock in milliseconds; each node sees it
through its own skew (an offset and a rate), always monotonic. The nemesis drops,
duplicates and delays (hence reorders) messages, partitions the network (among
others isolating the leader from the majority), crashes nodes (sometimes in the
middle of a step, with only part of that step's disk writes done) and restarts them
from their durable state, and asks for graceful resignations and snapshots. A
message to a crashed node may come back to its sender as a refused connection
(``RaftNode.peer_refused``: a follower of that node stands early).

After every step the :class:`Checker` asserts the safety properties; after the
faults stop, :meth:`Simulation.heal_and_converge` asserts liveness.
"""

from __future__ import annotations

import heapq
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from log_engine.replication.raft import (
    Entry,
    FileRaftStorage,
    LeaderAndEpoch,
    LoadSnapshotEvent,
    MemoryRaftStorage,
    RaftConfig,
    RaftDriver,
    RaftStorage,
    Role,
    Snapshot,
)
from log_engine.replication.raft.messages import RaftMessage, VoteResponse
from log_engine.replication.raft.storage import apply_action

TICK_MS = 10


@dataclass
class Faults:
    """How hostile the network and the nemesis are (probabilities per message or event)."""

    loss: float = 0.05
    duplicate: float = 0.03
    delay_ms_max: int = 25
    fault_interval_ms: int = 400  # mean time between nemesis actions
    crash_mid_step: float = 0.3  # share of crashes that tear the current step's writes
    snapshot_every_entries: int = 100
    propose_interval_ms: int = 30
    bounce_after_vote: float = 0.2  # restart a voter right after it granted a vote
    crash_new_leader: float = 0.3  # crash a new leader within a few ms of its election
    refused: float = 0.5  # share of messages to a crashed node whose sender hears "refused"


class StateMachine:
    """The listener: a list of applied (offset, payload) with a JSON snapshot format."""

    def __init__(self) -> None:
        self.applied: list[tuple[int, bytes]] = []
        self.end_offset = 0
        self.leader = LeaderAndEpoch(None, 0)
        self.snapshot_loads = 0

    def handle_commit(self, entries: tuple[Entry, ...], end_offset: int) -> None:
        assert end_offset > self.end_offset, (end_offset, self.end_offset)
        for entry in entries:
            assert self.end_offset <= entry.offset < end_offset, (entry.offset, end_offset)
            assert not self.applied or entry.offset > self.applied[-1][0]
            self.applied.append((entry.offset, entry.payload))
        self.end_offset = end_offset

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        self.applied = [(o, bytes.fromhex(p)) for o, p in json.loads(snapshot.payload)]
        self.end_offset = snapshot.snapshot_id.offset
        self.snapshot_loads += 1

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leader = leader

    def snapshot_payload(self) -> bytes:
        return json.dumps([[o, p.hex()] for o, p in self.applied]).encode()


@dataclass
class SimNode:
    """One simulated process: its durable storage outlives its driver."""

    node_id: int
    storage: RaftStorage
    clock_offset_ms: int
    clock_rate: float
    driver: RaftDriver | None = None
    machine: StateMachine = field(default_factory=StateMachine)
    last_local_ms: int = 0
    snapshot_at: int = 0

    def reopen_storage(self) -> None:
        """A new process opens its files again (a memory storage simply lives on)."""
        if isinstance(self.storage, FileRaftStorage):
            self.storage.close()
            self.storage = FileRaftStorage(self.storage.directory)

    def local_ms(self, global_ms: int) -> int:
        local = self.clock_offset_ms + int(global_ms * self.clock_rate)
        self.last_local_ms = max(self.last_local_ms, local)
        return self.last_local_ms


class Checker:
    """The safety invariants, checked after every step of the simulation."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.leaders: dict[int, int] = {}  # epoch -> the one node that led it
        self.committed: dict[int, Entry] = {}  # offset -> the entry committed there
        self.durable_epochs: dict[int, int] = {}
        self.lifetime: dict[int, dict[str, int]] = {}  # per live node: epoch, hw, checked

    def fail(self, message: str) -> None:
        raise AssertionError(f"seed={self.seed}: {message}")

    def restarted(self, node: SimNode) -> None:
        self.lifetime[node.node_id] = {"epoch": -1, "hw": -1, "checked": 0, "applied": 0}

    def check(self, nodes: list[SimNode]) -> None:
        for node in nodes:
            durable = node.storage.load().election.epoch
            if durable < self.durable_epochs.get(node.node_id, 0):
                self.fail(f"node {node.node_id}: durable epoch went back to {durable}")
            self.durable_epochs[node.node_id] = durable
            if node.driver is not None:
                self._check_live(node)

    def _check_live(self, node: SimNode) -> None:
        assert node.driver is not None
        raft = node.driver.node
        life = self.lifetime[node.node_id]
        if raft.epoch < life["epoch"]:
            self.fail(f"node {node.node_id}: epoch went back {life['epoch']} -> {raft.epoch}")
        if raft.high_watermark < life["hw"]:
            self.fail(f"node {node.node_id}: HW went back {life['hw']} -> {raft.high_watermark}")
        if raft.high_watermark > raft.log.end_offset:
            self.fail(f"node {node.node_id}: HW {raft.high_watermark} above log end")
        life["epoch"], life["hw"] = raft.epoch, raft.high_watermark
        if raft.role is Role.LEADER:
            first = self.leaders.setdefault(raft.epoch, node.node_id)
            if first != node.node_id:
                self.fail(f"two leaders in epoch {raft.epoch}: {first} and {node.node_id}")
        self._check_log(node, life)
        self._check_machine(node, life)

    def _check_log(self, node: SimNode, life: dict[str, int]) -> None:
        """Entries below a node's HW are the committed ones (all nodes agree on them)."""
        assert node.driver is not None
        log = node.driver.node.log
        start = max(life["checked"], log.start_offset)
        for entry in log.entries(start, node.driver.node.high_watermark):
            known = self.committed.setdefault(entry.offset, entry)
            if known != entry:
                self.fail(f"node {node.node_id}: committed {known} became {entry}")
        life["checked"] = max(life["checked"], node.driver.node.high_watermark)

    def _check_machine(self, node: SimNode, life: dict[str, int]) -> None:
        applied = node.machine.applied
        for offset, payload in applied[life["applied"] :]:
            known = self.committed.get(offset)
            if known is None or known.payload != payload or known.control:
                self.fail(f"node {node.node_id}: applied {offset}={payload!r}, committed {known}")
        life["applied"] = len(applied)

    def check_leader_completeness(self, node: SimNode) -> None:
        """A new leader's log holds every committed entry (those not in its snapshot)."""
        assert node.driver is not None
        log = node.driver.node.log
        for offset, entry in self.committed.items():
            if offset >= log.start_offset and (
                offset >= log.end_offset or log.entry(offset) != entry
            ):
                self.fail(f"leader {node.node_id} of epoch {node.driver.node.epoch} lacks {entry}")

    def check_machine_full(self, node: SimNode) -> None:
        """The state machine holds exactly the committed data entries below its end."""
        expected = [
            (o, e.payload)
            for o, e in sorted(self.committed.items())
            if o < node.machine.end_offset and not e.control
        ]
        if node.machine.applied != expected:
            self.fail(f"node {node.node_id}: state machine differs from the committed log")


class Simulation:
    """A cluster of ``voters`` nodes in a faulty simulated network."""

    def __init__(
        self,
        seed: int,
        voters: int,
        faults: Faults | None = None,
        storage_dir: Path | None = None,
    ) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.faults = faults or Faults()
        self.now_ms = 0
        self.steps = 0
        self.checker = Checker(seed)
        self.queue: list[tuple[int, int, RaftMessage]] = []
        self.sequence = 0
        self.blocked: set[tuple[int, int]] = set()
        self.proposed = 0
        self.tear: set[int] = set()
        self.restart_at: dict[int, int] = {}
        self.crash_at: dict[int, int] = {}
        self.torn_steps = 0
        self.stats: Counter[str] = Counter()
        ids = list(range(1, voters + 1))
        self.config = {
            n: RaftConfig(
                node_id=n,
                voter_ids=frozenset(ids),
                election_timeout_ms=150,
                election_backoff_max_ms=100,
                fetch_timeout_ms=300,
                request_timeout_ms=100,
                fetch_max_wait_ms=50,
                fetch_max_entries=20,
                snapshot_chunk_max_bytes=4096,
            )
            for n in ids
        }
        self.nodes = [
            SimNode(
                n,
                FileRaftStorage(storage_dir / f"node-{n}") if storage_dir else MemoryRaftStorage(),
                clock_offset_ms=self.rng.randrange(10_000),
                clock_rate=self.rng.uniform(0.9, 1.1),
            )
            for n in ids
        ]
        for node in self.nodes:
            self._start(node)

    # ---- processes ------------------------------------------------------------

    def _start(self, node: SimNode) -> None:
        node.reopen_storage()
        node.machine = StateMachine()
        node.snapshot_at = 0
        rng = random.Random(self.rng.getrandbits(64))
        node.driver = RaftDriver(
            self.config[node.node_id], node.storage, node.machine, node.local_ms(self.now_ms), rng
        )
        self.checker.restarted(node)
        self._send(node, node.driver.start())

    def crash(self, node: SimNode) -> None:
        """The process dies; what it wrote stays, as with a killed process and the page cache."""
        node.driver = None
        self.stats["crashes"] += 1

    def live(self) -> list[SimNode]:
        return [n for n in self.nodes if n.driver is not None]

    def leader(self) -> SimNode | None:
        leaders = [n for n in self.live() if n.driver and n.driver.node.role is Role.LEADER]
        return max(leaders, key=lambda n: n.driver.node.epoch) if leaders else None  # type: ignore[union-attr]

    # ---- the network ----------------------------------------------------------

    def _send(self, node: SimNode, messages: list[RaftMessage]) -> None:
        for message in messages:
            if (message.sender, message.receiver) in self.blocked:
                continue
            if self.rng.random() < self.faults.loss:
                continue
            copies = 2 if self.rng.random() < self.faults.duplicate else 1
            for _ in range(copies):
                delay = 1 + self.rng.randrange(self.faults.delay_ms_max)
                self.sequence += 1
                heapq.heappush(self.queue, (self.now_ms + delay, self.sequence, message))

    def _refuse(self, message: RaftMessage) -> None:
        """A message reached a crashed node: its sender may learn the connection was refused."""
        sender = self.nodes[message.sender - 1]
        if sender.driver is None or self.rng.random() >= self.faults.refused:
            return
        out = sender.driver.node.peer_refused(message.receiver, sender.local_ms(self.now_ms))
        self.stats["refused"] += 1
        self._send(sender, sender.driver.run(out))

    def _step_node(self, node: SimNode, message: RaftMessage | None) -> None:
        """Run a message (or a tick) through a node; a node marked to tear crashes halfway."""
        driver = node.driver
        assert driver is not None
        local_ms = node.local_ms(self.now_ms)
        raft = driver.node
        was_leader_epoch = raft.epoch if raft.role is Role.LEADER else None
        out = raft.tick(local_ms) if message is None else raft.handle(message, local_ms)
        if out.persist and node.node_id in self.tear:
            self.tear.discard(node.node_id)
            done = self.rng.randrange(len(out.persist) + 1)
            for action in out.persist[:done]:
                apply_action(node.storage, action)
            self.crash(node)  # nothing sent, nothing handed to the state machine
            self.torn_steps += 1
            return
        for action in out.persist:
            self.stats[type(action).__name__] += 1
        self.stats["snapshot_loads"] += sum(isinstance(e, LoadSnapshotEvent) for e in out.events)
        messages = driver.run(out)
        self._send(node, messages)
        if raft.role is Role.LEADER and raft.epoch != was_leader_epoch:
            self.checker.check_leader_completeness(node)
            if self.chaos and self.rng.random() < self.faults.crash_new_leader:
                # a targeted fault: the new leader dies before its epoch's first entry
                # spreads (Raft's "figure 8": older entries must not count as committed)
                self.crash_at[node.node_id] = self.now_ms + self.rng.randrange(1, 40)
        voted = any(isinstance(m, VoteResponse) and m.vote_granted for m in messages)
        if voted and self.chaos and self.rng.random() < self.faults.bounce_after_vote:
            self.crash(node)  # a targeted fault: does the vote survive a restart?
            self.restart_at[node.node_id] = self.now_ms + self.rng.randrange(1, 20)

    # ---- the run --------------------------------------------------------------

    chaos = True

    def run(self, duration_ms: int) -> None:
        """Run the cluster (with faults while ``chaos``) for ``duration_ms``."""
        try:
            self._run(duration_ms)
        except Exception as error:  # the core's own invariant checks land here too
            error.add_note(f"simulation seed={self.seed}, step {self.steps}, t={self.now_ms} ms")
            error.add_note(self.describe())
            raise

    def _run(self, duration_ms: int) -> None:
        end = self.now_ms + duration_ms
        next_tick = self.now_ms
        while self.now_ms < end:
            if self.queue and self.queue[0][0] <= next_tick:
                self.now_ms, _, message = heapq.heappop(self.queue)
                target = self.nodes[message.receiver - 1]
                if target.driver is not None and (
                    (message.sender, message.receiver) not in self.blocked
                ):
                    self._step_node(target, message)
                elif target.driver is None:
                    self._refuse(message)
            else:
                self.now_ms = next_tick
                next_tick += TICK_MS
                self._tick_all()
            self.steps += 1
            self.checker.check(self.nodes)

    def _tick_all(self) -> None:
        for node_id, due_ms in list(self.crash_at.items()):
            if due_ms <= self.now_ms:
                del self.crash_at[node_id]
                if self.nodes[node_id - 1].driver is not None:
                    self.crash(self.nodes[node_id - 1])
                    self.restart_at[node_id] = self.now_ms + self.rng.randrange(1, 200)
        for node_id, due_ms in list(self.restart_at.items()):
            if due_ms <= self.now_ms:
                del self.restart_at[node_id]
                if self.nodes[node_id - 1].driver is None:
                    self._start(self.nodes[node_id - 1])
        for node in self.nodes:
            if node.driver is not None:
                self._step_node(node, None)
        self._client_and_machines()
        if self.chaos and self.rng.random() < TICK_MS / self.faults.fault_interval_ms:
            self._nemesis()

    def _client_and_machines(self) -> None:
        leader = self.leader()
        proposing = self.chaos and self.rng.random() < TICK_MS / self.faults.propose_interval_ms
        if leader is not None and proposing:
            assert leader.driver is not None
            count = 1 + self.rng.randrange(3)
            payloads = [f"e{self.proposed + i}".encode() for i in range(count)]
            self.proposed += count
            _, messages = leader.driver.append(payloads, leader.local_ms(self.now_ms))
            self._send(leader, messages)
        for node in self.live():
            assert node.driver is not None
            machine, raft = node.machine, node.driver.node
            due = machine.end_offset - node.snapshot_at >= self.faults.snapshot_every_entries
            if due and machine.end_offset > raft.log.start_offset:
                node.snapshot_at = machine.end_offset
                node.driver.create_snapshot(machine.end_offset, machine.snapshot_payload())

    def _nemesis(self) -> None:
        rng = self.rng
        live = self.live()
        choice = rng.random()
        leader = self.leader()
        self.stats["nemesis"] += 1
        if choice < 0.2 and leader is not None:
            self._isolate({leader.node_id})  # the leader loses the majority
        elif choice < 0.35:
            group = rng.sample(self.nodes, rng.randrange(1, len(self.nodes)))
            self._isolate({n.node_id for n in group})
        elif choice < 0.5:
            self.blocked.clear()  # heal
        elif choice < 0.65 and live:
            victim = rng.choice(live)
            if rng.random() < self.faults.crash_mid_step:
                self.tear.add(victim.node_id)  # dies in its next step that writes
            else:
                self.crash(victim)
        elif choice < 0.75:
            dead = [n for n in self.nodes if n.driver is None]
            if dead:
                self._start(rng.choice(dead))
        elif choice < 0.85 and live:
            victim = rng.choice(live)  # a quick bounce: back within a few ms, from disk
            self.crash(victim)
            self.restart_at[victim.node_id] = self.now_ms + rng.randrange(1, 30)
        elif choice < 0.92 and leader is not None:
            assert leader.driver is not None
            self._send(leader, leader.driver.resign(leader.local_ms(self.now_ms)))
        else:
            self.blocked = {
                (a.node_id, b.node_id)
                for a in self.nodes
                for b in self.nodes
                if a is not b and rng.random() < 0.2
            }  # a lossy, asymmetric mesh

    def _isolate(self, group: set[int]) -> None:
        ids = [n.node_id for n in self.nodes]
        self.blocked = {
            (a, b) for a in ids for b in ids if a != b and ((a in group) != (b in group))
        }

    def heal_and_converge(self, limit_ms: int = 20_000) -> None:
        """Stop the faults, restart every node and require one leader and equal logs."""
        self.chaos = False
        self.tear.clear()
        self.crash_at.clear()
        self.blocked.clear()
        self.faults.loss = self.faults.duplicate = 0.0
        for node in self.nodes:
            if node.driver is None:
                self._start(node)
        waited = 0
        marker_epoch = -1  # the epoch whose leader was last asked to append the marker
        while waited < limit_ms:
            self.run(100)
            waited += 100
            leader = self.leader()
            if leader is None or leader.driver is None:
                continue
            if leader.driver.node.epoch != marker_epoch and not self._marker_committed():
                marker_epoch = leader.driver.node.epoch  # a leader change may have lost it
                _, messages = leader.driver.append([b"final"], leader.local_ms(self.now_ms))
                self._send(leader, messages)
                continue
            if self._converged(leader):
                return
        self.checker.fail(f"no convergence within {limit_ms} ms after healing: {self.describe()}")

    def _marker_committed(self) -> bool:
        return any(entry.payload == b"final" for entry in self.checker.committed.values())

    def _converged(self, leader: SimNode) -> bool:
        """One leader, every node applied its whole log, and a write after healing committed."""
        assert leader.driver is not None
        end = leader.driver.node.log.end_offset
        if leader.driver.node.high_watermark != end or not self._marker_committed():
            return False
        for node in self.nodes:
            if node.driver is None or node.machine.end_offset != end:
                return False
        for node in self.nodes:
            self.checker.check_machine_full(node)
        if max(self.checker.committed) != end - 1:
            self.checker.fail("the converged log is shorter than what was committed")
        return True

    def describe(self) -> str:
        parts = []
        for node in self.nodes:
            if node.driver is None:
                parts.append(f"{node.node_id}:down")
                continue
            raft = node.driver.node
            parts.append(
                f"{node.node_id}:{raft.role.value}@{raft.epoch} end={raft.log.end_offset} "
                f"hw={raft.high_watermark}"
            )
        return "; ".join(parts)
