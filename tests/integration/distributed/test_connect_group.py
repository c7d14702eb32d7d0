"""Connect workers' group membership against real brokers (a Sluice broker process, Tansu).

Workers here are :class:`WorkerGroupMember` s with a listener that records
what they are told to start and stop; some run in processes of their own so
they can be killed with SIGKILL or paused with SIGSTOP for real.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from connect_worker.distributed.assignor import Work, union
from connect_worker.distributed.membership import ConfigState, GroupSettings, WorkerGroupMember
from connect_worker.distributed.protocol import ConnectAssignment, ConnectProtocol
from connect_worker.runtime.status import TaskId
from harness.broker_process import BrokerProcess
from harness.connect_member import MemberProcess
from harness.tansu import TansuProcess
from log_engine.client import Admin, Consumer
from log_engine.errors import InconsistentGroupProtocolError

TASK_COUNTS = {"alpha": 4, "beta": 3, "gamma": 2}
CONFIGURED = Work.configured(TASK_COUNTS)
DEFAULT_CONFIG = ConfigState(7, TASK_COUNTS)
DELAY_MS = 2000
_WAIT_S = 60.0

GROUP_SETTINGS = {
    "session.timeout.ms": "3000",
    "heartbeat.interval.ms": "300",
    "rebalance.timeout.ms": "10000",
    "scheduled.rebalance.max.delay.ms": str(DELAY_MS),
    "retry.backoff.ms": "50",
}


class _Recorder:
    """A listener that keeps what its worker runs, what it started and stopped, and why."""

    def __init__(self) -> None:
        self.running = Work()
        self.started: list[Work] = []
        self.stopped: list[Work] = []
        self.lost: list[str] = []
        self.delays_ms: list[int] = []
        self.assignments: list[ConnectAssignment] = []

    async def on_assigned(self, assignment: ConnectAssignment, generation: int) -> None:
        self.assignments.append(assignment)
        self.delays_ms.append(assignment.delay_ms)
        if assignment.failed:
            return
        full = Work.of(assignment.connectors, assignment.tasks)
        self.started.append(full - self.running)
        self.running = full

    async def on_revoked(
        self, leader: str, connectors: tuple[str, ...], tasks: tuple[TaskId, ...]
    ) -> None:
        revoked = Work.of(connectors, tasks)
        assert revoked - self.running == Work(), "told to stop what it does not run"
        self.stopped.append(revoked)
        self.running -= revoked

    async def on_lost(
        self, connectors: tuple[str, ...], tasks: tuple[TaskId, ...], reason: str
    ) -> None:
        self.lost.append(reason)
        self.running = Work()


class _Worker:
    """An in-process worker: its member, its recorder and the task polling it."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        name: str,
        config: ConfigState = DEFAULT_CONFIG,
        **overrides: str,
    ) -> None:
        values = {"bootstrap.servers": bootstrap, "group.id": group, **GROUP_SETTINGS}
        self.settings = GroupSettings.from_mapping({**values, **overrides})
        self.recorder = _Recorder()
        self.config = config
        self.member = WorkerGroupMember(
            self.settings,
            rest_url=f"http://{name}:8083/",
            config_state=lambda: self.config,
            listener=self.recorder,
        )
        self.task: asyncio.Task[None] | None = None

    def start(self) -> _Worker:
        self.task = asyncio.get_running_loop().create_task(self._loop())
        return self

    async def _loop(self) -> None:
        while True:
            await self.member.poll(200)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        await self.member.stop()


def _process_worker(bootstrap: str, group: str, name: str, log_dir: Path) -> MemberProcess:
    """A worker in its own process, to be killed or paused for real."""
    settings = {"bootstrap.servers": bootstrap, "group.id": group, **GROUP_SETTINGS}
    return MemberProcess(settings, f"http://{name}:8083/", TASK_COUNTS, log_dir / f"{name}.log")


async def _until(what: str, check: Callable[[], bool], timeout_s: float = _WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s}s: {what}")
        await asyncio.sleep(0.05)


def _covers_once(works: list[Work], configured: Work = CONFIGURED) -> bool:
    counted = sum(len(w.connectors) + len(w.tasks) for w in works)
    return union(works) == configured and counted == len(configured.connectors) + len(
        configured.tasks
    )


def _balanced(works: list[Work]) -> bool:
    for kind in ("connectors", "tasks"):
        sizes = [len(getattr(w, kind)) for w in works]
        if max(sizes) - min(sizes) > 1:
            return False
    return True


def _settled(workers: list[_Worker], configured: Work = CONFIGURED) -> bool:
    members = [w.member for w in workers]
    if not all(m.stable for m in members) or len({m.generation for m in members}) != 1:
        return False
    works = [w.recorder.running for w in workers]
    return _covers_once(works, configured) and _balanced(works)


@pytest.fixture
def sluice(fresh_broker: Callable[..., BrokerProcess]) -> BrokerProcess:
    """A broker of the test's own that accepts the short session timeouts used here."""
    return fresh_broker(**{"group.min.session.timeout.ms": "1000"})


@pytest.fixture
async def workers() -> AsyncIterator[list[_Worker]]:
    started: list[_Worker] = []
    yield started
    for worker in started:
        await worker.stop()


@pytest.fixture
def processes() -> Iterator[list[MemberProcess]]:
    started: list[MemberProcess] = []
    yield started
    for process in started:
        process.stop()


async def test_a_rejoin_requested_while_joining_is_not_lost(sluice: BrokerProcess) -> None:
    """A config change seen while a join is under way makes the member join again
    (it was lost, and ``poll`` then returned at once forever, starving heartbeats)."""
    calls = 0

    def config() -> ConfigState:
        nonlocal calls
        calls += 1
        if calls == 1:  # the config topic changes after the metadata was taken
            member.request_rejoin("config changed while joining")
        return DEFAULT_CONFIG

    values = {"bootstrap.servers": sluice.bootstrap, "group.id": "mid-join", **GROUP_SETTINGS}
    member = WorkerGroupMember(
        GroupSettings.from_mapping(values),
        rest_url="http://w:8083/",
        config_state=config,
        listener=_Recorder(),
    )
    try:
        for _ in range(3):
            await member.poll(100)
        assert member.generation >= 2 and member.stable, (member.generation, calls)
    finally:
        await member.stop()


async def test_three_workers_share_everything_then_a_fourth_gets_a_share_without_restarts(
    sluice: BrokerProcess, workers: list[_Worker]
) -> None:
    for name in ("w1", "w2", "w3"):
        workers.append(_Worker(sluice.bootstrap, "connect-a", name).start())
    await _until("three workers cover every connector and task once", lambda: _settled(workers))
    leaders = [w for w in workers if w.member.is_leader]
    assert len(leaders) == 1
    leader = leaders[0].member
    for worker in workers:
        assignment = worker.member.assignment
        assert assignment is not None and assignment.leader == leader.member_id
        assert worker.member.leader_url == leader.rest_url
        assert worker.member.protocol is ConnectProtocol.SESSIONED
    owner = next(w for w in workers if TaskId("alpha", 0) in w.recorder.running.tasks)
    assert leader.owner_url(TaskId("alpha", 0)) == owner.member.rest_url

    before = {w.member.member_id: (w.recorder.running, len(w.recorder.started)) for w in workers}
    workers.append(_Worker(sluice.bootstrap, "connect-a", "w4").start())
    await _until("four workers, balanced", lambda: _settled(workers) and len(workers) == 4)
    assert workers[3].recorder.running, "the new worker got a share"
    for worker in workers[:3]:
        had, starts_before = before[worker.member.member_id]
        later_starts = union(worker.recorder.started[starts_before:])
        assert later_starts == Work(), "an old worker started nothing (kept work not restarted)"
        stopped = union(worker.recorder.stopped)
        assert worker.recorder.running == had - stopped
        assert worker.recorder.running, "it kept the rest"


async def test_a_worker_that_leaves_has_its_work_reassigned_after_the_delay(
    sluice: BrokerProcess, workers: list[_Worker]
) -> None:
    for name in ("w1", "w2", "w3"):
        workers.append(_Worker(sluice.bootstrap, "connect-b", name).start())
    await _until("three workers settled", lambda: _settled(workers))
    leaving = next(w for w in workers if not w.member.is_leader)
    gone = leaving.recorder.running
    workers.remove(leaving)
    left_at = time.monotonic()
    await leaving.stop()
    await _until("the survivors run everything", lambda: _settled(workers))
    elapsed_ms = (time.monotonic() - left_at) * 1000
    assert any(d > 0 for w in workers for d in w.recorder.delays_ms), "the leader held it back"
    assert elapsed_ms >= DELAY_MS * 0.9, "reassigned only once the delay had passed"
    assert gone - union([union(w.recorder.started) for w in workers]) == Work()


async def test_a_killed_worker_has_its_work_reassigned(
    sluice: BrokerProcess,
    workers: list[_Worker],
    processes: list[MemberProcess],
    tmp_path: Path,
) -> None:
    for name in ("w1", "w2"):
        workers.append(_Worker(sluice.bootstrap, "connect-c", name).start())
    victim = _process_worker(sluice.bootstrap, "connect-c", "w3", tmp_path)
    processes.append(victim)

    def all_three() -> bool:
        works = [w.recorder.running for w in workers] + [victim.snapshot()[0]]
        return all(w.member.stable for w in workers) and _covers_once(works) and all(works)

    await _until("the process worker has a share", all_three)
    os.kill(victim.process.pid, signal.SIGKILL)
    victim.process.wait(timeout=30)
    await _until("the survivors run the killed worker's work", lambda: _settled(workers))


async def test_a_worker_paused_past_its_session_stops_everything_when_it_resumes(
    sluice: BrokerProcess,
    workers: list[_Worker],
    processes: list[MemberProcess],
    tmp_path: Path,
) -> None:
    workers.append(_Worker(sluice.bootstrap, "connect-d", "w1").start())
    zombie = _process_worker(sluice.bootstrap, "connect-d", "w2", tmp_path)
    processes.append(zombie)

    def both() -> bool:
        works = [workers[0].recorder.running, zombie.snapshot()[0]]
        return workers[0].member.stable and _covers_once(works) and all(works)

    await _until("both workers have a share", both)
    held, _ = zombie.snapshot()
    os.kill(zombie.process.pid, signal.SIGSTOP)
    try:
        await _until("the survivor runs everything", lambda: _settled(workers))
    finally:
        os.kill(zombie.process.pid, signal.SIGCONT)

    def told_lost() -> bool:
        return any(e["event"] == "lost" for e in zombie.snapshot()[1])

    await _until("the resumed worker is told it lost the group", told_lost)
    events = zombie.snapshot()[1]
    lost = next(e for e in events if e["event"] == "lost")
    # what it held when paused, reported before anything else happened to it
    assert Work.of(lost["connectors"], (TaskId(c, n) for c, n in lost["tasks"])) == held

    def rejoined() -> bool:
        works = [workers[0].recorder.running, zombie.snapshot()[0]]
        return workers[0].member.stable and _covers_once(works) and all(works)

    await _until("the resumed worker rejoins and gets a share again", rejoined)


async def test_eager_workers_downgrade_the_group_and_share_everything(
    sluice: BrokerProcess, workers: list[_Worker]
) -> None:
    workers.append(_Worker(sluice.bootstrap, "connect-e", "w1").start())
    workers.append(
        _Worker(sluice.bootstrap, "connect-e", "w2", **{"connect.protocol": "default"}).start()
    )
    await _until("two workers settled", lambda: _settled(workers))
    assert all(w.member.protocol is ConnectProtocol.EAGER for w in workers)
    # eager: before each rebalance every worker stops everything it runs
    held = {id(w): w.recorder.running for w in workers}
    workers.append(
        _Worker(sluice.bootstrap, "connect-e", "w3", **{"connect.protocol": "default"}).start()
    )
    await _until("three eager workers settled", lambda: _settled(workers))
    for worker in workers[:2]:
        assert worker.recorder.stopped[-1] == held[id(worker)]


async def test_three_workers_join_on_tansu(tansu: TansuProcess, workers: list[_Worker]) -> None:
    for name in ("w1", "w2", "w3"):
        workers.append(
            _Worker(tansu.bootstrap, "connect-tansu", name, **{"session.timeout.ms": "10000"})
            .start()
        )
    await _until("three workers on Tansu cover everything once", lambda: _settled(workers), 120)
    assert sum(w.member.is_leader for w in workers) == 1




async def test_a_worker_cut_off_from_its_coordinator_stops_everything_within_its_session(
    sluice: BrokerProcess, workers: list[_Worker]
) -> None:
    """The broker is paused: no heartbeat is answered, and the worker must not go on as a
    member while the coordinator (once back) would hand its work to others."""
    workers.append(_Worker(sluice.bootstrap, "connect-f", "w1").start())
    await _until("the worker runs everything", lambda: _settled(workers))
    recorder = workers[0].recorder
    assert sluice.process is not None
    os.kill(sluice.process.pid, signal.SIGSTOP)
    try:
        # The session is 3 s and a request times out after 30 s: only the session counts.
        await _until("the cut-off worker stops everything", lambda: bool(recorder.lost), 15)
        assert recorder.running == Work()
    finally:
        os.kill(sluice.process.pid, signal.SIGCONT)
    await _until("it rejoins once the broker is back", lambda: _settled(workers))


async def test_a_leader_behind_a_members_config_makes_everyone_catch_up_first(
    sluice: BrokerProcess, workers: list[_Worker]
) -> None:
    """CONFIG_MISMATCH: the leader read its config topic to offset 5, a joining worker to 9.
    Nobody gets work from the stale config; all read to 9 and rejoin."""
    newer = ConfigState(9, {"alpha": 2, "delta": 3})
    leader = _Worker(sluice.bootstrap, "connect-g", "w1", ConfigState(5, {"alpha": 1}))
    workers.append(leader.start())
    old = Work.configured({"alpha": 1})
    await _until("the first worker runs the old config", lambda: _settled(workers, old))
    assert leader.member.is_leader
    caught_up: list[int] = []
    seen = leader.recorder.on_assigned

    async def catch_up(assignment: ConnectAssignment, generation: int) -> None:
        if assignment.failed:  # what the herder does: read the config topic that far
            caught_up.append(assignment.config_offset)
            leader.config = newer
        await seen(assignment, generation)

    leader.recorder.on_assigned = catch_up  # type: ignore[method-assign]
    workers.append(_Worker(sluice.bootstrap, "connect-g", "w2", newer).start())
    new = Work.configured(newer.task_counts)
    await _until("both run the newer config", lambda: _settled(workers, new))
    assert caught_up == [9]
    joiner_seen = workers[1].recorder.assignments
    assert joiner_seen[0].failed and joiner_seen[0].config_offset == 9
    assert all(a.config_offset == 9 for a in joiner_seen[1:] + leader.recorder.assignments[-1:])
    assert leader.member.is_leader


async def test_a_group_id_already_used_by_consumers_is_refused_clearly(
    sluice: BrokerProcess,
) -> None:
    async with Admin({"bootstrap.servers": sluice.bootstrap}) as admin:
        await admin.create_topic("shared-topic", 1, 1)
    consumer = Consumer({"bootstrap.servers": sluice.bootstrap, "group.id": "shared"})
    consumer.subscribe(["shared-topic"])
    worker = _Worker(sluice.bootstrap, "shared", "w1")
    try:
        await consumer.poll(1.0)
        with pytest.raises(InconsistentGroupProtocolError, match="JoinGroup for group shared"):
            await worker.member.poll(100)
    finally:
        await worker.member.stop()
        await consumer.close()
