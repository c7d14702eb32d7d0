"""The incremental cooperative assignor (KIP-415): scenarios and properties.

``_Cluster`` plays the group: each rebalance the leader assigns, every member
stops what is revoked and starts what is assigned, and members rejoin at once
after a revocation, or when the delay the leader gave runs out.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from connect_worker.distributed.assignor import (
    AssignorState,
    ClusterAssignment,
    Work,
    assign,
    eager_assign,
    union,
)
from connect_worker.runtime.status import TaskId

MAX_DELAY_MS = 300_000


class _Cluster:
    def __init__(
        self, members: list[str], task_counts: Mapping[str, int], max_delay_ms: int = MAX_DELAY_MS
    ) -> None:
        self.running: dict[str, Work] = {m: Work() for m in members}
        self.task_counts = dict(task_counts)
        self.max_delay_ms = max_delay_ms
        self.state = AssignorState()
        self.generation = 0
        self.now_ms = 0
        self.history: list[ClusterAssignment] = []
        self.starts: dict[str, int] = {m: 0 for m in members}

    def rebalance(self) -> ClusterAssignment:
        self.generation += 1
        result, self.state = assign(
            self.running,
            self.task_counts,
            now_ms=self.now_ms,
            max_delay_ms=self.max_delay_ms,
            state=self.state,
            last_completed_generation=self.generation - 1,
            generation=self.generation,
        )
        for member in self.running:
            revoked, assigned = result.revoked[member], result.assigned[member]
            assert not (revoked & assigned), "a member is told to stop and start the same work"
            self.running[member] = (self.running[member] - revoked) | assigned
            self.starts[member] += len(assigned.connectors) + len(assigned.tasks)
            assert self.running[member] == result.owned[member]
        self.history.append(result)
        return result

    def settle(self, max_rounds: int = 30) -> int:
        """Rebalance until nothing is revoked, assigned or delayed; the rounds it took."""
        for rounds in range(1, max_rounds + 1):
            result = self.rebalance()
            moved = any(result.revoked.values()) or any(result.assigned.values())
            if not moved and result.delay_ms == 0:
                return rounds
            if not any(result.revoked.values()) and result.delay_ms:
                self.now_ms += result.delay_ms
        raise AssertionError(f"no stable assignment after {max_rounds} rounds: {self.history[-3:]}")

    def join(self, member: str) -> None:
        self.running[member] = Work()
        self.starts[member] = 0

    def depart(self, member: str) -> Work:
        return self.running.pop(member)


def _assert_complete_and_balanced(cluster: _Cluster) -> None:
    configured = Work.configured(cluster.task_counts)
    running = list(cluster.running.values())
    assert union(running) == configured
    assert sum(len(w.connectors) for w in running) == len(configured.connectors), "twice"
    assert sum(len(w.tasks) for w in running) == len(configured.tasks), "twice"
    for kind in ("connectors", "tasks"):
        sizes = [len(getattr(w, kind)) for w in running]
        assert max(sizes) - min(sizes) <= 1, (kind, sizes)


def test_first_rebalance_assigns_everything_once_and_evenly() -> None:
    cluster = _Cluster(["w1", "w2", "w3"], {"a": 4, "b": 3, "c": 2})
    assert cluster.settle() == 2  # one that assigns, one that confirms nothing moves
    _assert_complete_and_balanced(cluster)
    result = cluster.history[0]
    assert result.delay_ms == 0 and not any(result.revoked.values())


def test_a_joining_worker_gets_a_share_and_the_others_only_stop_their_excess() -> None:
    cluster = _Cluster(["w1", "w2", "w3"], {"a": 4, "b": 4, "c": 4})
    cluster.settle()
    before = dict(cluster.running)
    cluster.join("w4")
    first = cluster.rebalance()
    assert first.assigned["w4"] == Work(), "revocations first: nothing starts in that round"
    assert all(len(first.revoked[m].tasks) == 1 for m in ("w1", "w2", "w3"))
    second = cluster.rebalance()
    assert len(second.assigned["w4"].tasks) == 3
    assert not any(second.revoked.values())
    for member in ("w1", "w2", "w3"):
        kept = cluster.running[member]
        assert kept.tasks <= before[member].tasks, "nothing else started on the old members"
        assert len(before[member].tasks - kept.tasks) == 1, "one task stopped, the rest kept"
    cluster.settle()
    _assert_complete_and_balanced(cluster)


def test_a_departed_workers_work_waits_for_the_delay_then_moves() -> None:
    cluster = _Cluster(["w1", "w2", "w3"], {"a": 6, "b": 3})
    cluster.settle()
    gone = cluster.depart("w2")
    result = cluster.rebalance()
    assert result.delay_ms == MAX_DELAY_MS
    assert not any(result.assigned.values()), "held back while the worker may return"
    assert not any(result.revoked.values())
    cluster.now_ms += 1000
    early = cluster.rebalance()  # another rebalance within the delay: still held back
    assert early.delay_ms == MAX_DELAY_MS - 1000
    assert not any(early.assigned.values())
    cluster.now_ms += early.delay_ms
    due = cluster.rebalance()
    assert union(due.assigned.values()) == gone
    assert due.delay_ms == 0
    cluster.settle()
    _assert_complete_and_balanced(cluster)


def test_a_worker_returning_within_the_delay_gets_the_lost_work() -> None:
    cluster = _Cluster(["w1", "w2", "w3"], {"a": 6})
    cluster.settle()
    gone = cluster.depart("w2")
    cluster.rebalance()
    cluster.now_ms += 10_000
    cluster.join("w2-restarted")
    during = cluster.rebalance()
    assert not any(during.assigned.values()) and during.delay_ms == MAX_DELAY_MS - 10_000
    cluster.now_ms += during.delay_ms
    due = cluster.rebalance()
    assert due.assigned["w2-restarted"] == gone
    assert due.assigned["w1"] == Work() and due.assigned["w3"] == Work()


def test_no_delay_configured_reassigns_at_once() -> None:
    cluster = _Cluster(["w1", "w2"], {"a": 4}, max_delay_ms=0)
    cluster.settle()
    gone = cluster.depart("w1")
    result = cluster.rebalance()
    assert result.assigned["w2"] == gone and result.delay_ms == 0


def test_a_failed_sync_is_reassigned_at_once() -> None:
    """Nobody left, yet work the leader assigned is run by no one: give it again now."""
    cluster = _Cluster(["w1", "w2"], {"a": 4})
    cluster.settle()
    dropped = cluster.running["w1"]
    cluster.running["w1"] = Work()  # as if w1 never received its assignment
    result = cluster.rebalance()
    assert union(result.assigned.values()) == dropped and result.delay_ms == 0


def test_deleted_connectors_and_reduced_tasks_are_revoked() -> None:
    cluster = _Cluster(["w1", "w2"], {"a": 4, "b": 2})
    cluster.settle()
    cluster.task_counts = {"a": 2}
    result = cluster.rebalance()
    revoked = union(result.revoked.values())
    gone = [TaskId("b", 0), TaskId("b", 1), TaskId("a", 2), TaskId("a", 3)]
    assert revoked == Work.of(["b"], gone)
    cluster.settle()
    _assert_complete_and_balanced(cluster)


def test_work_run_twice_is_stopped_everywhere_then_assigned_once() -> None:
    cluster = _Cluster(["w1", "w2"], {"a": 2})
    cluster.settle()
    twice = next(iter(cluster.running["w1"].tasks))
    cluster.running["w2"] = cluster.running["w2"] | Work.of(tasks=[twice])  # a zombie's copy
    result = cluster.rebalance()
    assert twice in result.revoked["w1"].tasks and twice in result.revoked["w2"].tasks
    cluster.settle()
    _assert_complete_and_balanced(cluster)


def test_a_new_leader_without_history_keeps_what_runs() -> None:
    cluster = _Cluster(["w1", "w2", "w3"], {"a": 5, "b": 1})
    cluster.settle()
    before = dict(cluster.running)
    cluster.state = AssignorState()  # leadership moved: the new leader remembers nothing
    result = cluster.rebalance()
    assert not any(result.revoked.values()) and not any(result.assigned.values())
    assert cluster.running == before


def test_eager_assignment_is_round_robin_connectors_then_tasks() -> None:
    plan = eager_assign(["w2", "w1"], {"b": 1, "a": 2})
    assert plan == {
        "w1": Work.of(["a"], [TaskId("a", 0), TaskId("b", 0)]),
        "w2": Work.of(["b"], [TaskId("a", 1)]),
    }


# -- properties ---------------------------------------------------------------------------

_task_counts = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=3), st.integers(0, 8), max_size=6
)
_members = st.lists(st.text("wxyz", min_size=1, max_size=4), min_size=1, max_size=6, unique=True)


@settings(max_examples=200, deadline=None)
@given(members=_members, task_counts=_task_counts)
def test_everything_assigned_once_and_balanced_from_scratch(
    members: list[str], task_counts: dict[str, int]
) -> None:
    cluster = _Cluster(members, task_counts)
    cluster.settle()
    _assert_complete_and_balanced(cluster)


@settings(max_examples=200, deadline=None)
@given(
    members=_members,
    task_counts=_task_counts,
    events=st.lists(
        st.one_of(
            st.tuples(st.just("join"), st.text("pqrs", min_size=1, max_size=3)),
            st.tuples(st.just("leave"), st.integers(0, 10)),
            st.tuples(st.just("config"), _task_counts),
        ),
        max_size=5,
    ),
)
def test_after_any_changes_and_the_delay_everything_runs_once_and_balanced(
    members: list[str], task_counts: dict[str, int], events: list[tuple]
) -> None:
    cluster = _Cluster(members, task_counts)
    cluster.settle()
    for kind, arg in events:
        if kind == "join" and arg not in cluster.running:
            cluster.join(arg)
        elif kind == "leave" and len(cluster.running) > 1:
            cluster.depart(sorted(cluster.running)[arg % len(cluster.running)])
        elif kind == "config":
            cluster.task_counts = arg
        cluster.settle()
        _assert_complete_and_balanced(cluster)


@settings(max_examples=200, deadline=None)
@given(members=_members, task_counts=_task_counts, newcomer=st.text("pqrs", min_size=1))
def test_a_join_moves_only_the_excess(
    members: list[str], task_counts: dict[str, int], newcomer: str
) -> None:
    cluster = _Cluster(members, task_counts)
    cluster.settle()
    before = dict(cluster.running)
    cluster.join(newcomer)
    starts_before = dict(cluster.starts)
    cluster.settle()
    _assert_complete_and_balanced(cluster)
    n = len(cluster.running)
    for kind in ("connectors", "tasks"):
        total = len(getattr(Work.configured(task_counts), kind))
        ceiling = -(-total // n)
        for member, had in before.items():
            had_items = getattr(had, kind)
            kept = getattr(cluster.running[member], kind) & had_items
            # an old member keeps what it had up to its new share: no more moves than needed
            assert len(kept) >= min(len(had_items), total // n), (member, kind)
            assert len(getattr(cluster.running[member], kind)) <= ceiling
    for member in before:
        assert cluster.starts[member] == starts_before[member], "old members started nothing"


@settings(max_examples=200, deadline=None)
@given(members=_members, task_counts=_task_counts)
def test_a_settled_group_rebalancing_again_moves_nothing(
    members: list[str], task_counts: dict[str, int]
) -> None:
    cluster = _Cluster(members, task_counts)
    cluster.settle()
    result = cluster.rebalance()
    assert not any(result.revoked.values()) and not any(result.assigned.values())
    assert result.delay_ms == 0


@settings(max_examples=200, deadline=None)
@given(members=_members, task_counts=_task_counts, leaver=st.integers(0, 10))
def test_a_departure_only_adds_work_to_the_survivors(
    members: list[str], task_counts: dict[str, int], leaver: int
) -> None:
    cluster = _Cluster([*members, "extra"], task_counts)
    cluster.settle()
    cluster.depart(sorted(cluster.running)[leaver % len(cluster.running)])
    before = dict(cluster.running)
    rounds_before = len(cluster.history)
    cluster.settle()
    _assert_complete_and_balanced(cluster)
    for result in cluster.history[rounds_before:]:
        assert not any(result.revoked.values()), "a survivor stopped something"
    for member, had in before.items():
        assert had - cluster.running[member] == Work()
