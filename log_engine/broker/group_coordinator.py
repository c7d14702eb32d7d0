"""The group coordinator: JoinGroup/SyncGroup barriers, heartbeats, session expiry.

Every group known here is coordinated by this broker (in a cluster, the groups of
the ``__consumer_offsets`` partitions it leads: ``group_ownership.py`` unloads the
others). A join parks the member's request
until the rebalance completes: when every known member has rejoined, or the
rebalance timeout expires (members that did not rejoin are dropped). The first
rebalance of an empty group waits ``group.initial.rebalance.delay.ms`` so that
members starting together land in one generation. Committed offsets live in
:class:`~log_engine.broker.offset_store.OffsetStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from log_engine.broker.group import Group, GroupState, JoinResult, Member
from log_engine.errors import ErrorCode

log = logging.getLogger(__name__)


_EXPIRY_CHECK_S = 0.5


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """The fields of a JoinGroup request the coordinator needs."""

    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool


class GroupCoordinator:
    """Membership for every group; all methods run on the broker's event loop."""

    def __init__(
        self,
        *,
        initial_rebalance_delay_ms: int,
        min_session_timeout_ms: int,
        max_session_timeout_ms: int,
    ) -> None:
        self.groups: dict[str, Group] = {}
        self._initial_delay_ms = initial_rebalance_delay_ms
        self._min_session_ms = min_session_timeout_ms
        self._max_session_ms = max_session_timeout_ms
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._expiry_task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._expiry_task = asyncio.get_running_loop().create_task(self._expire_members())

    async def stop(self) -> None:
        if self._expiry_task:
            self._expiry_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._expiry_task
        for timer in self._timers.values():
            timer.cancel()

    # -- JoinGroup -----------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        """Handle a JoinGroup; returns when the rebalance the join takes part in completes."""
        if not req.group_id:
            return JoinResult(ErrorCode.INVALID_GROUP_ID, member_id=req.member_id)
        if not self._min_session_ms <= req.session_timeout_ms <= self._max_session_ms:
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=req.member_id)
        group = self.groups.setdefault(req.group_id, Group(req.group_id))
        if group.state is GroupState.DEAD:
            group.state = GroupState.EMPTY
        if not group.supports(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=req.member_id)
        if not req.member_id:
            member_id = f"{req.client_id or 'member'}-{uuid.uuid4()}"
            if req.require_known_member_id:
                group.pending_member_ids.add(member_id)
                return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
            return await self._add_member_and_wait(group, req, member_id)
        if req.member_id in group.pending_member_ids:
            group.pending_member_ids.discard(req.member_id)
            return await self._add_member_and_wait(group, req, req.member_id)
        member = group.members.get(req.member_id)
        if member is None:
            return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=req.member_id)
        return await self._rejoin(group, member, req)

    async def _add_member_and_wait(
        self, group: Group, req: JoinRequest, member_id: str
    ) -> JoinResult:
        member = Member(
            member_id,
            req.group_instance_id,
            req.client_id,
            req.client_host,
            req.session_timeout_ms,
            req.rebalance_timeout_ms,
            req.protocol_type,
            list(req.protocols),
        )
        group.members[member_id] = member
        if group.protocol_type is None or len(group.members) == 1:
            group.protocol_type = req.protocol_type
        return await self._wait_for_join(group, member)

    async def _rejoin(self, group: Group, member: Member, req: JoinRequest) -> JoinResult:
        changed = list(req.protocols) != member.protocols
        member.protocols = list(req.protocols)
        member.session_timeout_ms = req.session_timeout_ms
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.touch()
        settled = group.state in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE)
        if settled and not changed and member.member_id != group.leader_id:
            return group.join_result_for(member)
        return await self._wait_for_join(group, member)

    async def _wait_for_join(self, group: Group, member: Member) -> JoinResult:
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        if member.join_waiter is not None and not member.join_waiter.done():
            member.join_waiter.set_result(
                JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member.member_id)
            )
        member.join_waiter = waiter
        self._prepare_rebalance(group)
        self._maybe_complete_join(group)
        try:
            return await waiter
        finally:
            member.touch()

    def _prepare_rebalance(self, group: Group) -> None:
        if group.state is GroupState.PREPARING_REBALANCE:
            return
        self._fail_pending_syncs(group, ErrorCode.REBALANCE_IN_PROGRESS)
        initial = group.state is GroupState.EMPTY
        group.state = GroupState.PREPARING_REBALANCE
        delay_ms = group.max_rebalance_timeout_ms()
        if initial and self._initial_delay_ms > 0:
            delay_ms = min(self._initial_delay_ms, delay_ms)
            group.rebalance_deadline = -1.0  # the initial delay: wait it out
        else:
            group.rebalance_deadline = time.monotonic() + delay_ms / 1000
        self._schedule(group, delay_ms / 1000)

    def _schedule(self, group: Group, delay_s: float) -> None:
        if (timer := self._timers.pop(group.group_id, None)) is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[group.group_id] = loop.call_later(delay_s, self._rebalance_timer, group)

    def _rebalance_timer(self, group: Group) -> None:
        self._timers.pop(group.group_id, None)
        if group.state is GroupState.PREPARING_REBALANCE:
            self._complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        initial_delay = group.rebalance_deadline < 0
        if (
            group.state is GroupState.PREPARING_REBALANCE
            and group.all_joined()
            and not initial_delay
        ):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if (timer := self._timers.pop(group.group_id, None)) is not None:
            timer.cancel()
        for member_id in [m.member_id for m in group.members.values() if m.join_waiter is None]:
            log.info("group %s: member %s did not rejoin in time", group.group_id, member_id)
            del group.members[member_id]
        group.generation_id += 1
        if not group.members:
            group.state, group.protocol_name, group.leader_id = GroupState.EMPTY, None, None
            return
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        group.state = GroupState.COMPLETING_REBALANCE
        log.info(
            "group %s: generation %d with %d members (protocol %s)",
            group.group_id,
            group.generation_id,
            len(group.members),
            group.protocol_name,
        )
        for member in group.members.values():
            member.assignment = b""
            waiter, member.join_waiter = member.join_waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result(group.join_result_for(member))

    # -- SyncGroup, Heartbeat, LeaveGroup --------------------------------------------

    async def sync(
        self, group_id: str, generation_id: int, member_id: str, assignments: dict[str, bytes]
    ) -> tuple[int, bytes]:
        """Handle a SyncGroup; followers wait for the leader's assignment."""
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is None or member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID, b""
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION, b""
        member.touch()
        if group.state is GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS, b""
        if group.state is GroupState.STABLE:
            return ErrorCode.NONE, member.assignment
        waiter: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        member.sync_waiter = waiter
        if member_id == group.leader_id:
            for other in group.members.values():
                other.assignment = assignments.get(other.member_id, b"")
            group.state = GroupState.STABLE
            for other in group.members.values():
                pending, other.sync_waiter = other.sync_waiter, None
                if pending is not None and not pending.done():
                    pending.set_result((ErrorCode.NONE, other.assignment))
        try:
            return await waiter
        finally:
            member.sync_waiter = None
            member.touch()

    def _fail_pending_syncs(self, group: Group, error_code: int) -> None:
        for member in group.members.values():
            pending, member.sync_waiter = member.sync_waiter, None
            if pending is not None and not pending.done():
                pending.set_result((error_code, b""))

    def heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int:
        """Handle a Heartbeat; the error tells the member whether to rejoin."""
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is None or member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        member.touch()
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if group.state is GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, group_id: str, member_ids: Iterable[str]) -> list[int]:
        """Handle a LeaveGroup for several members; one error code per member."""
        group = self.groups.get(group_id)
        results: list[int] = []
        for member_id in member_ids:
            if group is None or member_id not in group.members:
                results.append(ErrorCode.UNKNOWN_MEMBER_ID)
                continue
            self._remove_member(group, group.members[member_id], "left the group")
            results.append(ErrorCode.NONE)
        return results

    def _remove_member(self, group: Group, member: Member, why: str) -> None:
        log.info("group %s: member %s %s", group.group_id, member.member_id, why)
        del group.members[member.member_id]
        if member.join_waiter is not None and not member.join_waiter.done():
            member.join_waiter.set_result(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID))
        if member.sync_waiter is not None and not member.sync_waiter.done():
            member.sync_waiter.set_result((ErrorCode.UNKNOWN_MEMBER_ID, b""))
        if group.state is GroupState.PREPARING_REBALANCE:
            self._maybe_complete_join(group)
        elif not group.members:
            group.state, group.protocol_name, group.leader_id = GroupState.EMPTY, None, None
            group.generation_id += 1
        else:
            self._prepare_rebalance(group)

    def unload(self, group_ids: Iterable[str]) -> None:
        """Another broker coordinates these groups now: forget them, and answer their
        members' waiting joins and syncs NOT_COORDINATOR (they look the coordinator up
        again and rejoin there)."""
        for group_id in group_ids:
            group = self.groups.pop(group_id, None)
            if (timer := self._timers.pop(group_id, None)) is not None:
                timer.cancel()
            if group is None:
                continue
            for member in group.members.values():
                if member.join_waiter is not None and not member.join_waiter.done():
                    member.join_waiter.set_result(
                        JoinResult(ErrorCode.NOT_COORDINATOR, member_id=member.member_id)
                    )
                if member.sync_waiter is not None and not member.sync_waiter.done():
                    member.sync_waiter.set_result((ErrorCode.NOT_COORDINATOR, b""))

    def is_member(self, group_id: str, member_id: str, generation_id: int) -> int:
        """Validate an offset commit's member and generation; ErrorCode.NONE when it may commit."""
        group = self.groups.get(group_id)
        if generation_id < 0 and (group is None or group.state is GroupState.EMPTY):
            return ErrorCode.NONE
        if group is None or member_id not in group.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if group.state is GroupState.COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        group.members[member_id].touch()
        return ErrorCode.NONE

    async def _expire_members(self) -> None:
        while True:
            await asyncio.sleep(_EXPIRY_CHECK_S)
            now = time.monotonic()
            for group in list(self.groups.values()):
                for member in [m for m in group.members.values() if m.is_expired(now)]:
                    self._remove_member(group, member, "session expired")
