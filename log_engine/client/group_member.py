"""Generic group membership: coordinator, join, sync, heartbeat, leave.

Kafka's group protocol is the same whatever the members share: consumers
(protocol type ``consumer``) share partitions, Sluice's distributed connect
workers (``connect``) share connectors and tasks. :class:`GroupMember` runs
the protocol; a :class:`GroupProtocol` supplies the type, the metadata each
member offers, the leader's assignment and what to do on revocation and
assignment. The bytes themselves are opaque here.

Lifecycle (eager rebalancing): :meth:`GroupMember.ensure_active` finds the
coordinator (FindCoordinator), tells the protocol to give up its assignment
(``on_revoke``), joins (JoinGroup; a v4+ coordinator first answers
MEMBER_ID_REQUIRED with an id to join with), computes the assignment if
elected leader, syncs (SyncGroup) and hands the assignment over
(``on_assign``). A heartbeat task then keeps the session alive every
``heartbeat.interval.ms`` and flags a rejoin when the coordinator reports a
rebalance; the owner calls ``ensure_active`` again (the consumer does so in
``poll``). :meth:`leave` sends LeaveGroup.

Losing the group: a member whose coordinator answered nothing for
``session.timeout.ms`` (a network cut, a process paused past its session) or
that the coordinator no longer knows (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
FENCED_INSTANCE_ID) has been dropped, and its assignment may already belong to
another member. If the owner passed ``on_lost``, it is awaited as soon as this
is noticed (before any new request is sent after such a pause), once per
assignment received; then the member rejoins as a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from log_engine.client import errors
from log_engine.client.cluster import Cluster
from log_engine.client.connection import BrokerConnection
from log_engine.client.coordinator_lookup import find_coordinator
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

log = logging.getLogger(__name__)

NO_GENERATION = -1
_COORDINATOR_PURPOSE = "group"
_JOIN_TIMEOUT_SLACK_MS = 5000
_LEAVE_GROUP_VERSION_MAX = 2
_LEAVE_TIMEOUT_MS = 5000  # closing does not wait longer for an unreachable coordinator


@dataclass(frozen=True, slots=True)
class GroupMemberInfo:
    """One member as the leader sees it in the JoinGroup response."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True)
class MembershipSettings:
    """Timing and identity of a member (from the owning client's config)."""

    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    heartbeat_interval_ms: int
    retry_backoff_ms: int
    group_instance_id: str | None = None
    # A member whose owner has not called polled() for this long leaves the group, so a
    # stuck consumer gives its partitions up (max.poll.interval.ms). None: no such check.
    poll_timeout_ms: int | None = None


class GroupProtocol(Protocol):
    """What a kind of member (consumer, connect worker) plugs into :class:`GroupMember`."""

    protocol_type: str

    def join_protocols(self) -> list[tuple[str, bytes]]:
        """``(protocol name, metadata)`` pairs offered in JoinGroup, preferred first."""
        ...

    def assign(
        self, protocol_name: str, members: list[GroupMemberInfo]
    ) -> Awaitable[dict[str, bytes]]:
        """Leader only: the assignment bytes of every member id."""
        ...

    def on_revoke(self, generation: int, member_id: str) -> Awaitable[None]:
        """Before (re)joining: stop using the current assignment (commit, callbacks)."""
        ...

    def on_assign(
        self, generation: int, member_id: str, protocol_name: str, assignment: bytes
    ) -> Awaitable[None]:
        """After SyncGroup: start using ``assignment``."""
        ...


class GroupMember:
    """Membership of one group through its coordinator, for one client."""

    def __init__(
        self,
        cluster: Cluster,
        settings: MembershipSettings,
        protocol: GroupProtocol,
        *,
        on_lost: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self._cluster = cluster
        self.settings = settings
        self._protocol = protocol
        self.generation = NO_GENERATION
        self.member_id = ""
        self.leader_id = ""
        self.protocol_name: str | None = None
        self._coordinator_id: int | None = None
        self._needs_join = True
        self._assigned = False
        self._join_lock = asyncio.Lock()
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._last_poll_monotonic = time.monotonic()
        self._on_lost = on_lost
        self._holds_assignment = False  # an assignment arrived and was not reported lost since
        self._last_contact_monotonic = time.monotonic()  # the coordinator last showed we are in
        self._lost_reason: str | None = None  # set when the coordinator says we are out
        self.rejoin_needed = asyncio.Event()  # set when the owner should call ensure_active
        self._closed = False

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.member_id == self.leader_id

    @property
    def stable(self) -> bool:
        """Joined with an assignment, and no rebalance pending."""
        return not self._needs_join and self.generation != NO_GENERATION

    def request_rejoin(self, reason: str) -> None:
        """Make the next :meth:`ensure_active` rejoin the group."""
        if not self._needs_join:
            log.info("group %s: rejoining (%s)", self.settings.group_id, reason)
        self._needs_join = True
        self.rejoin_needed.set()

    async def ensure_active(self) -> None:
        """Join (or rejoin) the group if needed; returns once this member is stable."""
        if not self._needs_join:
            return
        async with self._join_lock:
            backoff_s = self.settings.retry_backoff_ms / 1000
            while self._needs_join and not self._closed:
                if self._assigned:
                    await self._protocol.on_revoke(self.generation, self.member_id)
                    self._assigned = False
                self.rejoin_needed.clear()
                try:
                    await self._join_and_sync()
                except errors.KafkaError as exc:
                    await self._report_if_lost()
                    if not exc.retriable and exc.errno not in _REJOIN_ERRORS:
                        raise
                    log.info("group %s: join failed, retrying: %s", self.settings.group_id, exc)
                    await asyncio.sleep(backoff_s)
            self._start_heartbeat()

    async def coordinator(self, timeout_ms: int | None = None) -> BrokerConnection:
        """The connection to the group coordinator, looking it up if needed.

        Retriable failures are retried for ``timeout_ms`` (default: the session
        timeout), then raised.
        """
        backoff_s = self.settings.retry_backoff_ms / 1000
        budget_ms = self.settings.session_timeout_ms if timeout_ms is None else timeout_ms
        deadline = time.monotonic() + budget_ms / 1000
        while True:
            try:
                if self._coordinator_id is None:
                    await self._find_coordinator()
                assert self._coordinator_id is not None
                return await self._cluster.connection(self._coordinator_id, _COORDINATOR_PURPOSE)
            except errors.KafkaError as exc:
                if not exc.retriable or time.monotonic() + backoff_s > deadline:
                    raise
                self.coordinator_dead(str(exc))
                await asyncio.sleep(backoff_s)

    def coordinator_dead(self, reason: str) -> None:
        """Forget the coordinator (NOT_COORDINATOR, a dropped connection): look it up again."""
        if self._coordinator_id is not None:
            log.info("group %s: coordinator lost (%s)", self.settings.group_id, reason)
            self._coordinator_id = None

    async def leave(self) -> None:
        """Leave the group (skipped for static members, which keep their assignment)."""
        self._stop_heartbeat()
        if self._assigned:
            await self._protocol.on_revoke(self.generation, self.member_id)
            self._assigned = False
        self._holds_assignment = False
        await self._send_leave()

    def polled(self) -> None:
        """The owner is still polling (see ``MembershipSettings.poll_timeout_ms``)."""
        self._last_poll_monotonic = time.monotonic()

    async def _send_leave(self) -> None:
        if self.member_id and self.settings.group_instance_id is None:
            with contextlib.suppress(errors.KafkaError):
                conn = await self.coordinator(timeout_ms=_LEAVE_TIMEOUT_MS)
                body: dict[str, Any] = {
                    "group_id": self.settings.group_id,
                    "member_id": self.member_id,
                    "members": [{"member_id": self.member_id, "group_instance_id": None}],
                }
                # v3+ only adds leaving by group.instance.id (static members do not leave);
                # v2 at most is read the same way by every broker (librdkafka's mock
                # cluster advertises v3+ but reads them as v2 and ignores the leave).
                version = min(conn.api_version(ApiKey.LEAVE_GROUP), _LEAVE_GROUP_VERSION_MAX)
                await conn.send(
                    ApiKey.LEAVE_GROUP, body, version=version, timeout_ms=_LEAVE_TIMEOUT_MS
                )
        self._reset_generation(forget_member_id=True)

    async def close(self) -> None:
        """Leave the group and stop heartbeating."""
        if self._closed:
            return
        await self.leave()
        self._closed = True

    # -- join ----------------------------------------------------------------------------

    async def _find_coordinator(self) -> None:
        conn = await self._cluster.any_connection()
        found = await find_coordinator(conn, self.settings.group_id)
        self._cluster.add_broker(found.node_id, found.host, found.port)
        self._coordinator_id = found.node_id

    async def _join_and_sync(self) -> None:
        conn = await self.coordinator()
        await self._report_if_lost()
        response = await self._send_join(conn)
        code = response["error_code"]
        if code == ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = response["member_id"]
            response = await self._send_join(conn)
            code = response["error_code"]
        if code:
            self._handle_group_error(code, "JoinGroup")
        self._contact()
        self.generation = response["generation_id"]
        self.member_id = response["member_id"]
        self.leader_id = response["leader"]
        self.protocol_name = response["protocol_name"]
        assignments: list[dict[str, Any]] = []
        if self.is_leader:
            members = [
                GroupMemberInfo(m["member_id"], m.get("group_instance_id"), bytes(m["metadata"]))
                for m in response["members"]
            ]
            assert self.protocol_name is not None
            plan = await self._protocol.assign(self.protocol_name, members)
            assignments = [{"member_id": m, "assignment": a} for m, a in plan.items()]
        sync = await conn.send(ApiKey.SYNC_GROUP, self._sync_body(assignments))
        if sync["error_code"]:
            self._handle_group_error(sync["error_code"], "SyncGroup")
        self._contact()
        # A rejoin requested while this join was under way (e.g. the config changed
        # after the metadata was sent) must not be lost: join again right after.
        self._needs_join = self.rejoin_needed.is_set()
        self._last_poll_monotonic = time.monotonic()
        assert self.protocol_name is not None
        await self._protocol.on_assign(
            self.generation, self.member_id, self.protocol_name, bytes(sync["assignment"])
        )
        self._assigned = True
        self._holds_assignment = True
        log.info(
            "group %s: joined generation %s as %s%s",
            self.settings.group_id,
            self.generation,
            self.member_id,
            " (leader)" if self.is_leader else "",
        )

    async def _send_join(self, conn: BrokerConnection) -> dict[str, Any]:
        settings = self.settings
        body = {
            "group_id": settings.group_id,
            "session_timeout_ms": settings.session_timeout_ms,
            "rebalance_timeout_ms": settings.rebalance_timeout_ms,
            "member_id": self.member_id,
            "group_instance_id": settings.group_instance_id,
            "protocol_type": self._protocol.protocol_type,
            "protocols": [
                {"name": name, "metadata": metadata}
                for name, metadata in self._protocol.join_protocols()
            ],
        }
        timeout_ms = settings.rebalance_timeout_ms + _JOIN_TIMEOUT_SLACK_MS
        self._contact()  # the coordinator keeps a member waiting in JoinGroup in the group
        return await conn.send(ApiKey.JOIN_GROUP, body, timeout_ms=timeout_ms)

    def _sync_body(self, assignments: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "group_id": self.settings.group_id,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.settings.group_instance_id,
            "assignments": assignments,
        }

    def _handle_group_error(self, code: int, request: str) -> None:
        """Update state for a join/sync/heartbeat error, then raise it."""
        if code in _LOST_ERRORS and self._lost_reason is None:
            self._lost_reason = f"{request} answered error {code}: no longer in the group"
        if code in errors.COORDINATOR_ERRORS:
            self.coordinator_dead(f"{request} answered error {code}")
        elif code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
            self._reset_generation(forget_member_id=True)
        elif code == ErrorCode.ILLEGAL_GENERATION:
            self._reset_generation(forget_member_id=False)
        if code in _REJOIN_ERRORS or code in errors.COORDINATOR_ERRORS:
            self.request_rejoin(f"{request} error {code}")
        errors.check_error(code, f"{request} for group {self.settings.group_id}")

    def _contact(self) -> None:
        self._last_contact_monotonic = time.monotonic()

    def _session_left_ms(self) -> int:
        """How long an answer may take before the session is over (a heartbeat waits no more,
        so a silent coordinator is noticed within the session, not the request timeout)."""
        silent_ms = (time.monotonic() - self._last_contact_monotonic) * 1000
        left_ms = self.settings.session_timeout_ms - silent_ms
        return max(int(left_ms), self.settings.heartbeat_interval_ms)

    def _session_expired(self) -> bool:
        silent_s = time.monotonic() - self._last_contact_monotonic
        return silent_s > self.settings.session_timeout_ms / 1000

    async def _report_if_lost(self) -> None:
        """Tell the owner its assignment is void, if the group was lost since it arrived."""
        reason = self._lost_reason
        if reason is None and self._holds_assignment and self._session_expired():
            reason = "no answer from the coordinator within session.timeout.ms"
        if reason is None:
            return
        self._lost_reason = None
        if not self._holds_assignment:
            return
        self._holds_assignment = False
        log.warning("group %s: lost the group (%s)", self.settings.group_id, reason)
        self.coordinator_dead(reason)
        self._reset_generation(forget_member_id=True)
        self.request_rejoin(reason)
        if self._on_lost is not None:
            await self._on_lost(reason)

    def _reset_generation(self, *, forget_member_id: bool) -> None:
        self.generation = NO_GENERATION
        self.leader_id = ""
        if forget_member_id:
            self.member_id = ""
        self._needs_join = True

    # -- heartbeat -----------------------------------------------------------------------

    def _start_heartbeat(self) -> None:
        if self._heartbeat_task is None or self._heartbeat_task.done():
            self._heartbeat_task = asyncio.get_running_loop().create_task(self._heartbeat_loop())

    def _stop_heartbeat(self) -> None:
        if self._heartbeat_task is not None:
            self._heartbeat_task.cancel()
            self._heartbeat_task = None

    async def _heartbeat_loop(self) -> None:
        interval_s = self.settings.heartbeat_interval_ms / 1000
        while not self._closed:
            await asyncio.sleep(interval_s)
            if not self.stable:
                continue
            if self._session_expired():
                # Paused or cut off past the session: the coordinator has dropped us.
                await self._report_if_lost()
                if self._on_lost is None:
                    self.coordinator_dead("no successful heartbeat within session.timeout.ms")
                    self.request_rejoin("session expired")
                continue
            if self._poll_expired():
                await self._send_leave()
                self.request_rejoin("the owner stopped polling")
                continue
            try:
                await self._heartbeat()
                self._contact()
            except errors.KafkaError as exc:
                log.info("group %s: heartbeat failed: %s", self.settings.group_id, exc)
                await self._report_if_lost()

    def _poll_expired(self) -> bool:
        timeout_ms = self.settings.poll_timeout_ms
        if timeout_ms is None or time.monotonic() - self._last_poll_monotonic <= timeout_ms / 1000:
            return False
        log.warning(
            "group %s: no poll for more than %s ms (max.poll.interval.ms): leaving the group",
            self.settings.group_id,
            timeout_ms,
        )
        return True

    async def _heartbeat(self) -> None:
        try:
            conn = await self.coordinator()
            response = await conn.send(
                ApiKey.HEARTBEAT,
                {
                    "group_id": self.settings.group_id,
                    "generation_id": self.generation,
                    "member_id": self.member_id,
                    "group_instance_id": self.settings.group_instance_id,
                },
                timeout_ms=self._session_left_ms(),
            )
        except errors.KafkaError as exc:
            self.coordinator_dead(str(exc))
            raise
        code = response["error_code"]
        if code not in _LOST_ERRORS and code not in errors.COORDINATOR_ERRORS:
            self._contact()  # still a member (REBALANCE_IN_PROGRESS included)
        if code and self.stable:
            self._handle_group_error(code, "Heartbeat")


# The coordinator no longer counts this member (or this generation of it) in the group.
_LOST_ERRORS = frozenset(
    {ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.FENCED_INSTANCE_ID}
)

_REJOIN_ERRORS = frozenset(
    {
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.MEMBER_ID_REQUIRED,
    }
)
