"""Incremental cooperative assignment of connectors and tasks (KIP-415), as pure functions.

The group leader calls :func:`assign` once per rebalance with what every
member runs now (from its JoinGroup metadata), what the config topic holds
(connectors and their task counts), the time, and the :class:`AssignorState`
the previous call returned. It answers, per member, what to start and what to
stop, and the state for the next call. Nothing here does I/O or reads a clock.

The rules, in the order they are applied:

1. *Deleted* work (a connector removed from the config, tasks above a
   connector's new task count) is revoked from whoever runs it.
2. *Duplicated* work (run by two members: a zombie that came back) is revoked
   from every holder; the next rebalance assigns it once, as new.
3. *Lost* work (the leader assigned it last time, no member reports it now)
   belongs to a departed worker. If every previous member is still here it
   was a failed sync: reassign it at once. Otherwise hold it back: the
   members get ``delay_ms`` and rejoin when it ends; until
   ``scheduled.rebalance.max.delay.ms`` has passed since the departure, lost
   work stays unassigned, so a worker that restarts in time gets it back
   without anything else moving. At expiry it goes to the members that joined
   empty during the delay if there are any, else it is assigned as new work.
4. *Load balancing*: when no delay is running, a member holding more than its
   share (``total // members``, plus one for ``total % members`` of them) has
   the excess revoked. Revoked work is assigned in the *next* rebalance
   (cooperative: it is stopped before anyone starts it). Revoking in two
   successive rebalances backs off (40 ms, 1.6 s, ... up to the max delay).
5. *New* work and lost work due now go to the least loaded members, one at a
   time (connectors and tasks balanced separately).

Work a member keeps is never revoked and re-given to it; a member that joins
receives a share while the others stop only their excess.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from connect_worker.runtime.status import TaskId

_BACKOFF_BASE_MS = 40  # successive revoking rebalances wait 40 ms, 1.6 s, 64 s, ... (Kafka's)


@dataclass(frozen=True, slots=True)
class Work:
    """A set of connectors and tasks (Kafka's ``ConnectorsAndTasks``)."""

    connectors: frozenset[str] = frozenset()
    tasks: frozenset[TaskId] = frozenset()

    @staticmethod
    def of(connectors: Iterable[str] = (), tasks: Iterable[TaskId] = ()) -> Work:
        return Work(frozenset(connectors), frozenset(tasks))

    @staticmethod
    def configured(task_counts: Mapping[str, int]) -> Work:
        """Every connector of a config snapshot and its tasks ``0 .. count-1``."""
        tasks = (TaskId(name, n) for name, count in task_counts.items() for n in range(count))
        return Work.of(task_counts, tasks)

    def __or__(self, other: Work) -> Work:
        return Work(self.connectors | other.connectors, self.tasks | other.tasks)

    def __sub__(self, other: Work) -> Work:
        return Work(self.connectors - other.connectors, self.tasks - other.tasks)

    def __and__(self, other: Work) -> Work:
        return Work(self.connectors & other.connectors, self.tasks & other.tasks)

    def __bool__(self) -> bool:
        return bool(self.connectors or self.tasks)


EMPTY = Work()


def union(works: Iterable[Work]) -> Work:
    out = EMPTY
    for work in works:
        out |= work
    return out


@dataclass(frozen=True, slots=True)
class AssignorState:
    """What the leader remembers between rebalances (lost on a change of leader).

    ``previous`` is the work the leader believes assigned (lost work included
    while it is held back); it is trusted only if the rebalance it came from is
    the member's last completed one.
    """

    previous: Work = EMPTY
    previous_generation: int = -1
    previous_members: frozenset[str] = frozenset()
    previous_revocation: Work = EMPTY
    scheduled_rebalance_ms: int = 0  # when held-back lost work is due; 0: none scheduled
    delay_ms: int = 0
    candidates: frozenset[str] = frozenset()  # members that joined empty during the delay
    revoked_in_previous: bool = False
    successive_revocations: int = 0


@dataclass(frozen=True, slots=True)
class ClusterAssignment:
    """One rebalance's answer: per member, what to start, what to stop, what it then runs."""

    assigned: dict[str, Work]
    revoked: dict[str, Work]
    owned: dict[str, Work]
    delay_ms: int

    def owner_of(self) -> tuple[dict[str, str], dict[TaskId, str]]:
        """Who runs each connector and each task once this assignment is applied."""
        connectors = {c: m for m, work in self.owned.items() for c in work.connectors}
        tasks = {t: m for m, work in self.owned.items() for t in work.tasks}
        return connectors, tasks


@dataclass(slots=True)
class _Load:
    member: str
    connectors: set[str] = field(default_factory=set)
    tasks: set[TaskId] = field(default_factory=set)

    def work(self) -> Work:
        return Work.of(self.connectors, self.tasks)

    def remove(self, work: Work) -> None:
        self.connectors -= work.connectors
        self.tasks -= work.tasks


def assign(
    members: Mapping[str, Work],
    task_counts: Mapping[str, int],
    *,
    now_ms: int,
    max_delay_ms: int,
    state: AssignorState,
    last_completed_generation: int,
    generation: int,
) -> tuple[ClusterAssignment, AssignorState]:
    """Compute one rebalance (see the module docstring); ``members`` must not be empty."""
    if not members:
        raise ValueError("an assignment needs at least one member")
    previous = state.previous if state.previous_generation == last_completed_generation else EMPTY
    configured = Work.configured(task_counts)
    active = union(members.values())
    if state.previous_revocation & active:
        previous = active  # a revocation did not take effect: start from what runs

    deleted = (previous | active) - configured
    duplicated = _duplicated(members.values())
    lost = previous - active - deleted
    created = configured - previous - active

    current = {m: work - deleted for m, work in members.items()}
    to_revoke = {m: work & (deleted | duplicated) for m, work in members.items()}
    loads = [_Load(m, set(w.connectors), set(w.tasks)) for m, w in sorted(members.items())]
    for load in loads:
        load.remove(to_revoke[load.member])

    lost_now, state = _handle_lost(lost, loads, state, members, now_ms, max_delay_ms)

    if state.delay_ms == 0:
        balancing = _balancing_revocations(configured, loads)
        if state.revoked_in_previous and balancing:
            successive = state.successive_revocations + 1
            delay = 0 if max_delay_ms == 0 else min(_BACKOFF_BASE_MS**successive, max_delay_ms)
            state = replace(state, successive_revocations=successive, delay_ms=delay)
            if delay:
                state = replace(state, scheduled_rebalance_ms=now_ms + delay)
            else:
                _revoke(balancing, to_revoke, loads)
        elif balancing:
            _revoke(balancing, to_revoke, loads)
            state = replace(state, revoked_in_previous=True)
        elif state.revoked_in_previous:
            state = replace(state, revoked_in_previous=False, successive_revocations=0)
    else:
        state = replace(state, revoked_in_previous=False)

    to_assign = created | lost_now
    _fill(loads, sorted(to_assign.connectors), "connectors")
    _fill(loads, sorted(to_assign.tasks), "tasks")

    owned = {load.member: load.work() for load in loads}
    revoked = {m: to_revoke[m] for m in members}
    assigned = {m: owned[m] - current[m] for m in members}
    all_revoked = union(revoked.values())
    state = replace(
        state,
        previous=(union(owned.values()) - all_revoked) | lost,
        previous_revocation=all_revoked,
        previous_generation=generation,
        previous_members=frozenset(members),
    )
    return ClusterAssignment(assigned, revoked, owned, state.delay_ms), state


def _duplicated(works: Iterable[Work]) -> Work:
    connectors: Counter[str] = Counter()
    tasks: Counter[TaskId] = Counter()
    for work in works:
        connectors.update(work.connectors)
        tasks.update(work.tasks)
    return Work.of(
        (c for c, n in connectors.items() if n > 1), (t for t, n in tasks.items() if n > 1)
    )


def _handle_lost(
    lost: Work,
    loads: list[_Load],
    state: AssignorState,
    members: Mapping[str, Work],
    now_ms: int,
    max_delay_ms: int,
) -> tuple[Work, AssignorState]:
    """Lost work to assign as new now (some may go to candidates directly), and the state."""
    reset = replace(state, scheduled_rebalance_ms=0, delay_ms=0, candidates=frozenset())
    if not lost and not state.revoked_in_previous:
        return EMPTY, reset
    if state.scheduled_rebalance_ms <= 0 and state.previous_members <= set(members):
        return lost, state  # nobody left: the previous assignment did not reach someone
    if max_delay_ms == 0:
        return lost, state
    if 0 < state.scheduled_rebalance_ms <= now_ms:
        candidates = [load for load in loads if load.member in state.candidates]
        if not candidates:
            return lost, replace(reset, revoked_in_previous=False)
        for i, connector in enumerate(sorted(lost.connectors)):
            candidates[i % len(candidates)].connectors.add(connector)
        for i, task in enumerate(sorted(lost.tasks)):
            candidates[i % len(candidates)].tasks.add(task)
        return EMPTY, replace(reset, revoked_in_previous=False)
    empty = frozenset(load.member for load in loads if not load.connectors and not load.tasks)
    if now_ms < state.scheduled_rebalance_ms:
        delay = min(state.scheduled_rebalance_ms - now_ms, max_delay_ms)
    else:
        delay = max_delay_ms
    return EMPTY, replace(
        state,
        candidates=state.candidates | empty,
        delay_ms=delay,
        scheduled_rebalance_ms=now_ms + delay,
    )


def _balancing_revocations(configured: Work, loads: list[_Load]) -> dict[str, Work]:
    """What to revoke so that nobody holds more than its share of connectors, then tasks."""
    if not configured or all(not load.connectors and not load.tasks for load in loads):
        return {}
    connectors = _excess(len(configured.connectors), loads, "connectors")
    tasks = _excess(len(configured.tasks), loads, "tasks")
    return {
        load.member: Work.of(connectors.get(load.member, ()), tasks.get(load.member, ()))
        for load in loads
        if load.member in connectors or load.member in tasks
    }


def _excess(total: int, loads: list[_Load], kind: str) -> dict[str, list]:
    share, extra = divmod(total, len(loads))
    out: dict[str, list] = {}
    extras_given = 0
    for load in loads:
        held: set = getattr(load, kind)
        if len(held) <= share:
            continue
        allowed = share
        if extras_given < extra:
            extras_given += 1
            allowed = share + 1
        if len(held) > allowed:
            out[load.member] = sorted(held)[allowed:]
    return out


def _revoke(revocations: dict[str, Work], to_revoke: dict[str, Work], loads: list[_Load]) -> None:
    for load in loads:
        work = revocations.get(load.member)
        if work:
            to_revoke[load.member] = to_revoke[load.member] | work
            load.remove(work)


def _fill(loads: list[_Load], items: list, kind: str) -> None:
    """Give each item to the least loaded member (ties: member id order)."""
    for item in items:
        target = min(loads, key=lambda load: len(getattr(load, kind)))
        getattr(target, kind).add(item)


def eager_assign(members: Iterable[str], task_counts: Mapping[str, int]) -> dict[str, Work]:
    """The eager (v0) protocol: everything, round-robin over the sorted members,
    connectors first and tasks continuing where the connectors stopped."""
    order = sorted(members)
    if not order:
        raise ValueError("an assignment needs at least one member")
    connectors: dict[str, list[str]] = {m: [] for m in order}
    tasks: dict[str, list[TaskId]] = {m: [] for m in order}
    turn = 0
    for name in sorted(task_counts):
        connectors[order[turn % len(order)]].append(name)
        turn += 1
    for name in sorted(task_counts):
        for number in range(task_counts[name]):
            tasks[order[turn % len(order)]].append(TaskId(name, number))
            turn += 1
    return {m: Work.of(connectors[m], tasks[m]) for m in order}
