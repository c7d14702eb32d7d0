"""A Connect worker's membership of its group (Kafka's WorkerGroupMember and WorkerCoordinator).

:class:`WorkerGroupMember` joins the group ``group.id`` with protocol type
``connect`` through :class:`log_engine.client.GroupMember`, offers the
sub-protocols ``connect.protocol`` allows (:mod:`.protocol`), and, when it is
elected leader, computes everybody's assignment (:mod:`.assignor`). The
distributed herder drives it and hears about changes through a
:class:`RebalanceListener`::

    member = WorkerGroupMember(settings, rest_url=url, config_state=snapshot, listener=herder)
    await member.start()
    while running:
        await member.poll(timeout_ms)     # joins/rejoins when needed, then waits
    await member.stop()                   # leaves the group

What the listener is told, and when:

- ``on_revoked(leader, connectors, tasks)``: stop these now. Eager protocol:
  everything, before each rejoin. Cooperative protocols: only what the leader
  revoked, before the new assignment is reported.
- ``on_assigned(assignment, generation)``: ``assignment.connectors`` and
  ``assignment.tasks`` are everything this worker should run from now on
  (kept plus new); ``assignment.config_offset`` is the config topic offset the
  leader assigned from. The herder reads its config topic at least that far
  before it starts anything; if ``assignment.failed`` (CONFIG_MISMATCH) it
  starts nothing new (what it runs is kept and listed): the member rejoins by
  itself once the callback returns.
- ``on_lost(connectors, tasks, reason)``: the coordinator dropped this worker
  (no answer within ``session.timeout.ms``, or it no longer knows the member):
  another worker may run these already, so stop them at once, without waiting
  for a rebalance. The member then rejoins as a new one, holding nothing.

The callbacks run on the member's event loop and heartbeats go on while they
are awaited, so they must not block it: stopping and starting tasks (plugin
code, blocking) belongs in threads the callbacks await. :meth:`stop` leaves
the group without calling ``on_revoked`` for cooperative members: the herder
stops its own work when it shuts down.

After an assignment that revoked something the member rejoins at once, so the
leader can hand the revoked work out (KIP-415's second rebalance); after one
with a ``delay_ms`` it rejoins when the delay has passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from connect_worker.distributed.assignor import AssignorState, Work, assign, eager_assign
from connect_worker.distributed.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    ConnectAssignment,
    ConnectProtocol,
    WorkerMetadata,
)
from connect_worker.metrics.rebalance_metrics import RebalanceMetrics
from connect_worker.runtime.status import TaskId
from log_engine.client import (
    ClientConfig,
    Cluster,
    GroupMember,
    GroupMemberInfo,
    MembershipSettings,
)

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "connect"
_INT32_MAX = 2**31 - 1


class GroupSettings(BaseModel):
    """The worker settings membership uses, with Kafka Connect's names and defaults.

    Built from the whole worker config (other keys are ignored here).
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    bootstrap_servers: str = Field(
        alias="bootstrap.servers", description="Brokers of the cluster the group lives on"
    )
    group_id: str = Field(
        alias="group.id", min_length=1, description="The Connect cluster's group (and identity)"
    )
    session_timeout_ms: int = Field(
        10000, alias="session.timeout.ms", ge=1, le=_INT32_MAX,
        description="A worker silent this long is dropped from the group and stops its tasks",
    )  # fmt: skip
    heartbeat_interval_ms: int = Field(
        3000, alias="heartbeat.interval.ms", ge=1, le=_INT32_MAX,
        description="How often a worker tells the coordinator it is alive",
    )  # fmt: skip
    rebalance_timeout_ms: int = Field(
        60000, alias="rebalance.timeout.ms", ge=1, le=_INT32_MAX,
        description="How long the coordinator waits for every worker to rejoin in a rebalance",
    )  # fmt: skip
    scheduled_rebalance_max_delay_ms: int = Field(
        300000, alias="scheduled.rebalance.max.delay.ms", ge=0, le=_INT32_MAX,
        description="How long a departed worker's connectors and tasks wait for it to "
        "return before they are reassigned (cooperative protocols)",
    )  # fmt: skip
    connect_protocol: ConnectProtocol = Field(
        ConnectProtocol.SESSIONED, alias="connect.protocol",
        description="default (eager), compatible (incremental cooperative) or sessioned "
        "(incremental cooperative with signed internal requests)",
    )  # fmt: skip
    retry_backoff_ms: int = Field(
        100, alias="retry.backoff.ms", ge=0, le=_INT32_MAX,
        description="Pause before retrying a failed group request",
    )  # fmt: skip
    client_id: str = Field("connect-worker", alias="client.id", description="Client id sent")

    @field_validator("connect_protocol", mode="before")
    @classmethod
    def _parse_protocol(cls, value: Any) -> Any:
        return ConnectProtocol.from_setting(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check_heartbeat(self) -> Self:
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(
                f"heartbeat.interval.ms ({self.heartbeat_interval_ms}) must be lower than "
                f"session.timeout.ms ({self.session_timeout_ms})"
            )
        return self

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> GroupSettings:
        return cls.model_validate(dict(values))


@dataclass(frozen=True, slots=True)
class ConfigState:
    """What the worker has read of the config topic: up to ``offset``, these connectors
    with these task counts."""

    offset: int
    task_counts: Mapping[str, int] = field(default_factory=dict)


class RebalanceListener(Protocol):
    """The herder's side of membership (see the module docstring for the contract)."""

    async def on_assigned(self, assignment: ConnectAssignment, generation: int) -> None: ...

    async def on_revoked(
        self, leader: str, connectors: tuple[str, ...], tasks: tuple[TaskId, ...]
    ) -> None: ...

    async def on_lost(
        self, connectors: tuple[str, ...], tasks: tuple[TaskId, ...], reason: str
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class LeaderState:
    """What the leader knows after assigning: every member's url and who runs what."""

    urls: Mapping[str, str]
    connector_owners: Mapping[str, str]
    task_owners: Mapping[TaskId, str]

    def owner_url(self, work: str | TaskId) -> str | None:
        owners: Mapping[Any, str] = (
            self.task_owners if isinstance(work, TaskId) else self.connector_owners
        )
        owner = owners.get(work)
        return None if owner is None else self.urls.get(owner)


class WorkerGroupMember:
    """One worker's membership of its Connect group; all methods run on one event loop.

    ``client_props`` are the client keys of the worker's own connection to the
    group coordinator (its top-level ``security.protocol``, ``ssl.*``, ``sasl.*``).
    """

    def __init__(
        self,
        settings: GroupSettings,
        *,
        client_props: Mapping[str, str] | None = None,
        rest_url: str,
        config_state: Callable[[], ConfigState],
        listener: RebalanceListener,
        rebalance_metrics: RebalanceMetrics | None = None,
    ) -> None:
        self.settings = settings
        self._rebalance_metrics = rebalance_metrics
        self.rest_url = rest_url
        self._config_state = config_state
        self._listener = listener
        client = ClientConfig.from_mapping(
            {
                **(client_props or {}),
                "bootstrap.servers": settings.bootstrap_servers,
                "client.id": settings.client_id,
                "retry.backoff.ms": settings.retry_backoff_ms,
            }
        )
        self._cluster = Cluster(client)
        membership = MembershipSettings(
            group_id=settings.group_id,
            session_timeout_ms=settings.session_timeout_ms,
            rebalance_timeout_ms=settings.rebalance_timeout_ms,
            heartbeat_interval_ms=settings.heartbeat_interval_ms,
            retry_backoff_ms=settings.retry_backoff_ms,
        )
        self._member = GroupMember(self._cluster, membership, self, on_lost=self._lost)
        self.protocol: ConnectProtocol | None = None  # the sub-protocol the group agreed on
        self.assignment: ConnectAssignment | None = None  # everything this worker holds
        self.leader_state: LeaderState | None = None
        self._assignor_state = AssignorState()
        self._last_completed_generation = -1
        self._scheduled_rejoin: asyncio.TimerHandle | None = None
        self._started = False

    # -- what the herder calls ---------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster (the first :meth:`poll` joins the group)."""
        if not self._started:
            await self._cluster.bootstrap()
            self._started = True

    async def poll(self, timeout_ms: int) -> None:
        """Join or rejoin if needed, then wait up to ``timeout_ms`` for a rejoin to be due."""
        await self.start()
        await self._member.ensure_active()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_ms / 1000):
                await self._member.rejoin_needed.wait()
        await self._member.ensure_active()

    def request_rejoin(self, reason: str) -> None:
        """Rebalance at the next :meth:`poll` (e.g. the config topic changed the task counts)."""
        self._member.request_rejoin(reason)

    async def stop(self) -> None:
        """Leave the group (after ``on_revoked`` for eager members) and disconnect."""
        self._cancel_scheduled_rejoin()
        try:
            await self._member.close()
        finally:
            await self._cluster.close()

    @property
    def member_id(self) -> str:
        return self._member.member_id

    @property
    def generation(self) -> int:
        return self._member.generation

    @property
    def is_leader(self) -> bool:
        return self._member.is_leader

    @property
    def leader_url(self) -> str | None:
        return None if self.assignment is None else self.assignment.leader_url

    @property
    def stable(self) -> bool:
        """In the group with an assignment and no rebalance pending."""
        return self._member.stable

    def owner_url(self, work: str | TaskId) -> str | None:
        """Leader only: the REST url of the worker that runs a connector or task."""
        if not self.is_leader or not self._member.stable or self.leader_state is None:
            return None
        return self.leader_state.owner_url(work)

    # -- GroupProtocol -----------------------------------------------------------------

    protocol_type = PROTOCOL_TYPE

    def join_protocols(self) -> list[tuple[str, bytes]]:
        if self._rebalance_metrics is not None:  # called as each JoinGroup is sent
            self._rebalance_metrics.started(time.monotonic())
        state = self._config_state()
        metadata = WorkerMetadata(self.rest_url, state.offset, self._held())
        offered = self.settings.connect_protocol.offered()
        return [(p.protocol_name, metadata.encode(p)) for p in offered]

    async def assign(self, protocol_name: str, members: list[GroupMemberInfo]) -> dict[str, bytes]:
        protocol = ConnectProtocol.from_name(protocol_name)
        metadata = {m.member_id: WorkerMetadata.decode(m.metadata) for m in members}
        leader = self._member.member_id
        leader_url = metadata[leader].url
        max_offset = max(m.config_offset for m in metadata.values())
        config = self._config_state()
        if config.offset < max_offset:
            log.warning(
                "group %s: as leader at config offset %d, behind a member's %d: "
                "every member reads its config topic to %d and rejoins",
                self.settings.group_id, config.offset, max_offset, max_offset,
            )  # fmt: skip
            failed = ConnectAssignment(protocol.version, CONFIG_MISMATCH, leader, leader_url,
                                       max_offset)  # fmt: skip
            return {member: failed.encode() for member in metadata}
        if protocol.cooperative:
            plan = self._cooperative_plan(metadata, config)
            owned = {m: plan[m][1] for m in plan}
            answers = {
                member: ConnectAssignment(
                    protocol.version, NO_ERROR, leader, leader_url, config.offset,
                    _sorted_connectors(new), _sorted_tasks(new),
                    _sorted_connectors(revoked), _sorted_tasks(revoked), delay_ms,
                )
                for member, (new, _, revoked, delay_ms) in plan.items()
            }
        else:
            owned = eager_assign(metadata, config.task_counts)
            answers = {
                member: ConnectAssignment(
                    0, NO_ERROR, leader, leader_url, config.offset,
                    _sorted_connectors(work), _sorted_tasks(work),
                )
                for member, work in owned.items()
            }
        self.leader_state = LeaderState(
            {m: meta.url for m, meta in metadata.items()},
            {c: m for m, work in owned.items() for c in work.connectors},
            {t: m for m, work in owned.items() for t in work.tasks},
        )
        return {member: answer.encode() for member, answer in answers.items()}

    def _cooperative_plan(
        self, metadata: Mapping[str, WorkerMetadata], config: ConfigState
    ) -> dict[str, tuple[Work, Work, Work, int]]:
        running = {
            member: Work()
            if meta.assignment is None
            else Work.of(meta.assignment.connectors, meta.assignment.tasks)
            for member, meta in metadata.items()
        }
        result, self._assignor_state = assign(
            running,
            config.task_counts,
            now_ms=int(time.monotonic() * 1000),
            max_delay_ms=self.settings.scheduled_rebalance_max_delay_ms,
            state=self._assignor_state,
            last_completed_generation=self._last_completed_generation,
            generation=self._member.generation,
        )
        log.info(
            "group %s: assigned generation %d: %s",
            self.settings.group_id,
            self._member.generation,
            {m: (len(w.connectors), len(w.tasks)) for m, w in result.owned.items()},
        )
        return {
            m: (result.assigned[m], result.owned[m], result.revoked[m], result.delay_ms)
            for m in running
        }

    async def on_revoke(self, generation: int, member_id: str) -> None:
        if self.protocol is ConnectProtocol.EAGER and self.assignment is not None:
            held, self.assignment = self.assignment, None
            if held.connectors or held.tasks:
                await self._listener.on_revoked(held.leader, held.connectors, held.tasks)
        # cooperative: keep running everything until the leader revokes it explicitly
        self.leader_state = None

    async def on_assign(
        self, generation: int, member_id: str, protocol_name: str, assignment: bytes
    ) -> None:
        self.protocol = ConnectProtocol.from_name(protocol_name)
        received = ConnectAssignment.decode(assignment)
        self._cancel_scheduled_rejoin()
        held = self._held_work()
        if self.protocol.cooperative:
            revoked = Work.of(received.revoked_connectors, received.revoked_tasks)
            work = (held - revoked) | Work.of(received.connectors, received.tasks)
        else:
            # eager: the whole assignment; anything still held (the group just went from a
            # cooperative protocol to eager) that it leaves out is revoked
            work = Work.of(received.connectors, received.tasks)
            revoked = held - work
        if revoked:
            await self._listener.on_revoked(
                received.leader, _sorted_connectors(revoked), _sorted_tasks(revoked)
            )
        # a failed (CONFIG_MISMATCH) assignment carries no work: what is held is kept
        full = replace(
            received,
            connectors=_sorted_connectors(work),
            tasks=_sorted_tasks(work),
            revoked_connectors=_sorted_connectors(revoked),
            revoked_tasks=_sorted_tasks(revoked),
        )
        self.assignment = full
        self._last_completed_generation = generation
        log.info(
            "group %s: generation %d (%s): %d connectors, %d tasks%s%s",
            self.settings.group_id, generation, protocol_name,
            len(full.connectors), len(full.tasks),
            f", revoked {len(full.revoked_connectors) + len(full.revoked_tasks)}"
            if full.revoked_connectors or full.revoked_tasks else "",
            f", rejoin in {full.delay_ms} ms" if full.delay_ms else "",
        )  # fmt: skip
        await self._listener.on_assigned(full, generation)
        if self._rebalance_metrics is not None and not full.failed:
            self._rebalance_metrics.completed(
                protocol_name, full.leader_url, generation, time.monotonic()
            )
        if full.failed:
            await asyncio.sleep(self.settings.retry_backoff_ms / 1000)
            self._member.request_rejoin("the assignment failed (config offsets differed)")
        elif full.revoked_connectors or full.revoked_tasks:
            self._member.request_rejoin("revoked work is to be reassigned")
        elif full.delay_ms > 0:
            loop = asyncio.get_running_loop()
            self._scheduled_rejoin = loop.call_later(
                full.delay_ms / 1000, self._member.request_rejoin, "the scheduled rebalance is due"
            )

    # -- internals ---------------------------------------------------------------------

    async def _lost(self, reason: str) -> None:
        self._cancel_scheduled_rejoin()
        self.leader_state = None
        held, self.assignment = self.assignment, None
        if held is not None and (held.connectors or held.tasks):
            await self._listener.on_lost(held.connectors, held.tasks, reason)

    def _held(self) -> ConnectAssignment | None:
        """The current assignment as metadata reports it: everything held, nothing revoked."""
        if self.assignment is None:
            return None
        return replace(self.assignment, revoked_connectors=(), revoked_tasks=(), delay_ms=0)

    def _held_work(self) -> Work:
        held = self.assignment
        return Work() if held is None else Work.of(held.connectors, held.tasks)

    def _cancel_scheduled_rejoin(self) -> None:
        if self._scheduled_rejoin is not None:
            self._scheduled_rejoin.cancel()
            self._scheduled_rejoin = None


def _sorted_connectors(work: Work) -> tuple[str, ...]:
    return tuple(sorted(work.connectors))


def _sorted_tasks(work: Work) -> tuple[TaskId, ...]:
    return tuple(sorted(work.tasks))
