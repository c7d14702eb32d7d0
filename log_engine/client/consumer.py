"""The consumer: read records from assigned or subscribed partitions.

:class:`Consumer` is the asyncio client. Partitions come either from
``assign()`` (manual) or from ``subscribe()``, through a consumer group
(:mod:`~log_engine.client.group_member` with the ``consumer`` protocol type
and Kafka's ConsumerProtocol bytes, so Java and librdkafka consumers can share
the group). ``poll()`` drives everything the application must see happen in
its own flow: rebalances (with the ``on_revoke``/``on_assign`` callbacks),
automatic commits, position lookups (committed offset, else
``auto.offset.reset``), and returns prefetched records
(:mod:`~log_engine.client.fetcher`).

Commits store positions: the offset of the next record to read. With
``enable.auto.commit`` the positions of records already returned are committed
every ``auto.commit.interval.ms`` from within ``poll()``, before a rebalance
and on ``close()``: at-least-once for an application that finishes a batch
before polling again.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from log_engine.client import errors
from log_engine.client.assignors import assignor_for
from log_engine.client.cluster import Cluster
from log_engine.client.config import ConsumerConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.consumer_protocol import Assignment, Subscription
from log_engine.client.fetcher import Fetcher
from log_engine.client.group_member import GroupMember, GroupMemberInfo, MembershipSettings
from log_engine.client.offsets import (
    EARLIEST,
    LATEST,
    commit_offsets,
    fetch_committed,
    list_offsets,
)
from log_engine.client.subscription import SubscriptionState
from log_engine.client.types import ConsumerRecord, OffsetAndMetadata, TopicPartition
from log_engine.errors import ErrorCode

log = logging.getLogger(__name__)

RebalanceCallback = Callable[[list[TopicPartition]], Awaitable[None] | None]


class Consumer:
    """Asynchronous Kafka consumer (``bootstrap.servers``, ``group.id``, ...).

    Use ``async with Consumer(config) as consumer:`` or call :meth:`close`,
    which commits (with auto commit) and leaves the group.
    """

    def __init__(
        self, config: ConsumerConfig | Mapping[str, Any] | None = None, **overrides: Any
    ) -> None:
        self.config = (
            config
            if isinstance(config, ConsumerConfig)
            else ConsumerConfig.from_mapping(config, **overrides)
        )
        self._cluster = Cluster(
            self.config, allow_auto_create_topics=self.config.allow_auto_create_topics
        )
        self._subs = SubscriptionState(self.config.auto_offset_reset)
        self._fetcher = Fetcher(self.config, self._cluster, self._subs)
        self._member: GroupMember | None = None
        if self.config.group_id is not None:
            self._member = GroupMember(self._cluster, _settings(self.config), _ConsumerGroup(self))
        self._on_assign: RebalanceCallback | None = None
        self._on_revoke: RebalanceCallback | None = None
        self._joined_partition_counts: dict[str, int] = {}
        self._next_auto_commit = 0.0
        self._auto_commit_task: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False
        self._closing = asyncio.Event()  # set by close(): ends a waiting poll
        self._isolation = 1 if self.config.read_committed else 0

    async def __aenter__(self) -> Consumer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect to the cluster (``poll`` and the other calls do this on first use)."""
        if self._closed:
            raise errors.ClientClosedError("the consumer is closed")
        if not self._started:
            self._started = True
            await self._cluster.bootstrap()
            self._fetcher.start()
            self._next_auto_commit = time.monotonic() + self.config.auto_commit_interval_ms / 1000

    # -- what to read --------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions`` (no group membership; commits still need group.id)."""
        tps = [TopicPartition(*tp) for tp in partitions]
        removed = set(self._subs.assignment) - set(tps)
        self._subs.assign_manually(tps)
        self._cluster.add_topics({tp.topic for tp in tps})
        if removed:
            self._fetcher.drop(removed)
        self._fetcher.wakeup()

    def subscribe(
        self,
        topics: Iterable[str],
        on_assign: RebalanceCallback | None = None,
        on_revoke: RebalanceCallback | None = None,
    ) -> None:
        """Join ``group.id`` and read the partitions of ``topics`` the group assigns us."""
        if self._member is None:
            raise ValueError("subscribe() needs group.id")
        self._subs.subscribe(topics)
        self._on_assign, self._on_revoke = on_assign, on_revoke
        self._cluster.add_topics(self._subs.topics)
        self._member.request_rejoin("subscription changed")

    def unsubscribe(self) -> None:
        """Stop reading; a group member leaves at the next rebalance."""
        self._subs.unsubscribe()
        self._fetcher.drop()
        if self._member is not None:
            self._member.request_rejoin("unsubscribed")

    def assignment(self) -> set[TopicPartition]:
        """The partitions currently assigned."""
        return set(self._subs.assignment)

    def current_lag(self, tp: TopicPartition) -> int | None:
        """High watermark minus position, as of the last fetch (Kafka's ``currentLag``).

        None while either is unknown (not assigned, no fetch answered yet). Reads
        only what the consumer already knows: no request, safe from any thread.
        """
        state = self._subs.assignment.get(tp)
        if state is None or state.position is None or state.high_watermark < 0:
            return None
        return max(0, state.high_watermark - state.position)

    # -- reading -------------------------------------------------------------------------

    async def poll(self, timeout_ms: int = 0) -> list[ConsumerRecord]:
        """Up to ``max.poll.records`` records, waiting at most ``timeout_ms`` for some."""
        await self.start()
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            if self._closed:
                raise errors.ClientClosedError("the consumer is closed")
            await self._ensure_group()
            self._raise_if_topics_refused()
            self._maybe_auto_commit()
            if not await self._update_positions():
                await asyncio.sleep(min(self.config.retry_backoff_ms / 1000, 0.1))
            self._fetcher.wakeup()
            records = self._fetcher.drain(self.config.max_poll_records)
            if records:
                return records
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            await self._wait_for_data(remaining)

    def _raise_if_topics_refused(self) -> None:
        """TOPIC_AUTHORIZATION_FAILED for subscribed topics the broker refused to describe
        (as Java's consumer throws TopicAuthorizationException from poll): without
        it such a topic counts as absent and the consumer waits for it forever."""
        if not self._subs.subscribed:
            return
        known = self._cluster.metadata.topics
        refused = [
            name
            for name in self._subs.topics
            if (info := known.get(name)) is not None
            and info.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        ]
        if refused:
            errors.check_error(
                ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                f"Not authorized to access topics: [{', '.join(refused)}]",
            )

    async def _wait_for_data(self, timeout_s: float) -> None:
        events = [self._fetcher.data_ready, self._closing]
        if self._member is not None and self._subs.subscribed:
            events.append(self._member.rejoin_needed)
        waiters: list[asyncio.Future[object]] = [
            asyncio.ensure_future(event.wait()) for event in events
        ]
        if self._member is not None and self._member.is_leader and self._subs.subscribed:
            # a subscribed topic appearing (or growing) needs a rejoin, which this
            # poll's loop does: nothing else would end the wait before its timeout
            waiters.append(asyncio.ensure_future(self._partition_counts_change()))
        try:
            await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Read ``tp`` from ``offset`` next."""
        self._subs.state(tp).seek(offset)
        self._fetcher.drop({tp})

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Read from the earliest offset (looked up at the next poll or position call)."""
        self._reset(partitions, "earliest")

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Read from the log end (looked up at the next poll or position call)."""
        self._reset(partitions, "latest")

    def _reset(self, partitions: Iterable[TopicPartition] | None, to: str) -> None:
        tps = list(self._subs.assignment if partitions is None else partitions)
        for tp in tps:
            state = self._subs.state(tp)
            state.position = state.fetch_offset = None
            state.reset_to = to
            state.epoch += 1
        self._fetcher.drop(set(tps))

    async def position(self, tp: TopicPartition) -> int:
        """The offset of the next record poll() will return for ``tp``."""
        await self.start()
        state = self._subs.state(tp)
        while state.position is None:
            if not await self._update_positions():
                await asyncio.sleep(self.config.retry_backoff_ms / 1000)
        return state.position

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop fetching and returning ``partitions`` until :meth:`resume`."""
        for tp in partitions:
            self._subs.state(tp).paused = True

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Fetch and return ``partitions`` again."""
        for tp in partitions:
            self._subs.state(tp).paused = False
        self._fetcher.wakeup()

    def paused(self) -> set[TopicPartition]:
        return {tp for tp, state in self._subs.assignment.items() if state.paused}

    async def beginning_offsets(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The earliest offset of each partition."""
        await self.start()
        found = await list_offsets(self._cluster, dict.fromkeys(tps, EARLIEST))
        return {tp: offset for tp, (offset, _) in found.items()}

    async def end_offsets(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The log end offset (last stable offset with read_committed) of each partition."""
        await self.start()
        found = await list_offsets(
            self._cluster, dict.fromkeys(tps, LATEST), isolation_level=self._isolation
        )
        return {tp: offset for tp, (offset, _) in found.items()}

    # -- offsets -------------------------------------------------------------------------

    async def commit(
        self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None
    ) -> None:
        """Commit ``offsets`` (default: the positions of everything returned so far)."""
        await self.start()
        member = self._require_group()
        if offsets is None:
            to_commit = self._subs.consumed_offsets()
        else:
            to_commit = {
                TopicPartition(*tp): o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o)
                for tp, o in offsets.items()
            }
        if not to_commit:
            return
        group = self._subs.subscribed
        for attempt in range(2):
            conn = await member.coordinator()
            try:
                await commit_offsets(
                    conn,
                    member.settings.group_id,
                    to_commit,
                    generation=member.generation if group else -1,
                    member_id=member.member_id if group else "",
                    group_instance_id=member.settings.group_instance_id if group else None,
                )
                return
            except errors.KafkaError as exc:
                if exc.errno in errors.COORDINATOR_ERRORS or isinstance(
                    exc, errors.CorruptResponseError
                ):
                    member.coordinator_dead(str(exc))
                    if attempt == 0:
                        continue
                if exc.errno in (
                    ErrorCode.ILLEGAL_GENERATION,
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    ErrorCode.REBALANCE_IN_PROGRESS,
                ):
                    member.request_rejoin(f"commit failed: {exc}")
                raise

    async def committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The last committed offset of each partition (None: nothing committed)."""
        await self.start()
        member = self._require_group()
        conn = await member.coordinator()
        return await self._fetch_committed(member, conn, list(partitions))

    @staticmethod
    async def _fetch_committed(
        member: GroupMember, conn: BrokerConnection, tps: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """OffsetFetch at the coordinator; one that answers it no longer is is forgotten."""
        try:
            return await fetch_committed(conn, member.settings.group_id, tps)
        except errors.KafkaError as exc:
            if exc.errno in errors.COORDINATOR_ERRORS:
                member.coordinator_dead(str(exc))
            raise

    def _require_group(self) -> GroupMember:
        if self._member is None:
            raise ValueError("committing offsets needs group.id")
        return self._member

    def _maybe_auto_commit(self) -> None:
        if not self.config.enable_auto_commit or self._member is None:
            return
        now = time.monotonic()
        if now < self._next_auto_commit or (
            self._auto_commit_task is not None and not self._auto_commit_task.done()
        ):
            return
        self._next_auto_commit = now + self.config.auto_commit_interval_ms / 1000
        self._auto_commit_task = asyncio.get_running_loop().create_task(self._auto_commit())

    async def _auto_commit(self) -> None:
        try:
            await self.commit()
        except errors.KafkaError as exc:
            log.warning("auto commit failed: %s", exc)

    async def _update_positions(self) -> bool:
        """Give every assigned partition a position; False if a lookup failed (retry later)."""
        missing = [tp for tp in self._subs.missing_positions()]
        if not missing:
            return True
        try:
            await self._positions_from_commits(missing)
            await self._positions_from_resets(missing)
        except errors.KafkaError as exc:
            if not exc.retriable:
                raise
            log.debug("position lookup failed, retrying: %s", exc)
            return False
        return True

    async def _positions_from_commits(self, missing: list[TopicPartition]) -> None:
        states = self._subs.assignment
        ask = [tp for tp in missing if states[tp].reset_to is None]
        if not ask:
            return
        if self._member is None:
            for tp in ask:
                states[tp].reset_to = self._subs.default_reset
            return
        conn = await self._member.coordinator()
        committed = await self._fetch_committed(self._member, conn, ask)
        log.debug("committed offsets: %s", committed)
        for tp in ask:
            state = states.get(tp)
            if state is None or state.position is not None:
                continue
            found = committed.get(tp)
            if found is not None:
                state.seek(found.offset)
            else:
                state.reset_to = self._subs.default_reset

    async def _positions_from_resets(self, missing: list[TopicPartition]) -> None:
        states = self._subs.assignment
        todo = {tp: states[tp] for tp in missing if tp in states and states[tp].position is None}
        for tp, state in todo.items():
            if state.reset_to == "none":
                raise errors.NoOffsetForPartitionError(
                    f"{tp} has no committed offset and auto.offset.reset is none"
                )
        if not todo:
            return
        specs = {tp: EARLIEST if s.reset_to == "earliest" else LATEST for tp, s in todo.items()}
        epochs = {tp: s.epoch for tp, s in todo.items()}
        found = await list_offsets(
            self._cluster,
            specs,
            isolation_level=self._isolation,
            backoff_ms=self.config.retry_backoff_ms,
        )
        log.debug("positions reset: %s", found)
        for tp, (offset, _) in found.items():
            current = states.get(tp)
            if current is not None and current.position is None and current.epoch == epochs[tp]:
                current.seek(offset)

    # -- group ---------------------------------------------------------------------------

    async def _ensure_group(self) -> None:
        member = self._member
        if member is None or not (self._subs.subscribed or member.generation >= 0):
            return
        member.polled()
        if member.is_leader and self._partition_counts_changed():
            member.request_rejoin("partition count of a subscribed topic changed")
        if not self._subs.subscribed:
            await member.leave()
            return
        await member.ensure_active()

    async def _partition_counts_change(self) -> None:
        """Return once the metadata shows a subscribed topic's partition count changed."""
        while not self._partition_counts_changed():
            await self._cluster.wait_for_update()

    def _partition_counts_changed(self) -> bool:
        topics = self._cluster.metadata.topics
        for topic, count in self._joined_partition_counts.items():
            info = topics.get(topic)
            if info is not None and not info.error_code and len(info.partitions) != count:
                return True
        return False

    async def _revoked(self) -> None:
        revoked = list(self._subs.assignment)
        if self.config.enable_auto_commit and revoked:
            with contextlib.suppress(errors.KafkaError):
                await self.commit()
        if self._on_revoke is not None:
            await _call(self._on_revoke, revoked)
        self._subs.assign_from_group([])
        self._fetcher.drop()

    async def _assigned(self, partitions: list[TopicPartition]) -> None:
        log.debug("group %s: assigned %s", self.config.group_id, partitions)
        self._subs.assign_from_group(partitions)
        self._cluster.add_topics({tp.topic for tp in partitions})
        if self._on_assign is not None:
            await _call(self._on_assign, partitions)
        self._fetcher.wakeup()

    async def _leader_assign(
        self, protocol_name: str, members: list[GroupMemberInfo]
    ) -> dict[str, bytes]:
        subscriptions = {m.member_id: Subscription.decode(m.metadata) for m in members}
        topics = {t for s in subscriptions.values() for t in s.topics}
        metadata = await self._cluster.refresh(topics)
        counts = {t: len(metadata.topics[t].partitions) for t in topics if t in metadata.topics}
        # a subscribed topic not there yet counts as 0 partitions: once it appears (the
        # cluster keeps asking for it), the leader sees the count change and rejoins
        self._joined_partition_counts = {t: counts.get(t, 0) for t in topics}
        log.debug("group %s: assigning partitions of %s", self.config.group_id, counts)
        plan = assignor_for(protocol_name).assign(counts, subscriptions)
        return {member: Assignment(tuple(tps)).encode() for member, tps in plan.items()}

    # -- shutdown ------------------------------------------------------------------------

    async def close(self) -> None:
        """Commit (with auto commit), leave the group and close connections."""
        if self._closed:
            return
        self._closing.set()  # a poll waiting for data ends (ClientClosedError)
        try:
            if self._started and self._member is not None:
                if self._subs.subscribed or self._member.generation >= 0:
                    await self._member.close()
                elif self.config.enable_auto_commit and self._subs.assignment:
                    with contextlib.suppress(errors.KafkaError):
                        await self.commit()
        finally:
            self._closed = True
            if self._auto_commit_task is not None:
                await asyncio.gather(self._auto_commit_task, return_exceptions=True)
            await self._fetcher.close()
            await self._cluster.close()


class _ConsumerGroup:
    """The ``consumer`` protocol type: Kafka's ConsumerProtocol over :class:`GroupMember`."""

    protocol_type = "consumer"

    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer

    def join_protocols(self) -> list[tuple[str, bytes]]:
        metadata = Subscription(self._consumer._subs.topics).encode()
        return [(name, metadata) for name in self._consumer.config.partition_assignment_strategy]

    async def assign(self, protocol_name: str, members: list[GroupMemberInfo]) -> dict[str, bytes]:
        return await self._consumer._leader_assign(protocol_name, members)

    async def on_revoke(self, generation: int, member_id: str) -> None:
        await self._consumer._revoked()

    async def on_assign(
        self, generation: int, member_id: str, protocol_name: str, assignment: bytes
    ) -> None:
        await self._consumer._assigned(list(Assignment.decode(assignment).partitions))


def _settings(config: ConsumerConfig) -> MembershipSettings:
    assert config.group_id is not None
    return MembershipSettings(
        group_id=config.group_id,
        session_timeout_ms=config.session_timeout_ms,
        rebalance_timeout_ms=config.max_poll_interval_ms,
        heartbeat_interval_ms=config.heartbeat_interval_ms,
        retry_backoff_ms=config.retry_backoff_ms,
        group_instance_id=config.group_instance_id,
        poll_timeout_ms=config.max_poll_interval_ms,
    )


async def _call(callback: RebalanceCallback, partitions: list[TopicPartition]) -> None:
    result = callback(partitions)
    if inspect.isawaitable(result):
        await result
