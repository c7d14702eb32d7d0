"""The consumer's fetcher: prefetching Fetch requests and record decoding.

A background task keeps one Fetch request in flight per broker for the
fetchable partitions it leads. As soon as a response arrives, its record
bytes are queued (not decoded) and the partitions' fetch offsets move past the
last complete batch, so the next request goes out while the application is
still polling the previous data. Queued bytes are bounded by
``queued.max.messages.kbytes``: above it no fetch is sent.

``drain`` (called by poll) decodes queued batches with
:func:`log_engine.records.decode_batch` and returns at most
``max.poll.records``: it skips records below the partition's position (a fetch
may start mid-batch), control batches, batches of aborted transactions under
``read_committed``, and a trailing partial batch (the broker cuts responses at
a byte limit, not at a batch boundary).

Fetch v13+ names topics by id only: a request goes out at v13+ when the
metadata has an id for every topic in it (Metadata v10+), else at v12 at most;
answers are mapped back from id to name.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from log_engine.client import errors
from log_engine.client.cluster import NO_TOPIC_ID, Cluster
from log_engine.client.config import ConsumerConfig
from log_engine.client.subscription import PartitionState, SubscriptionState
from log_engine.client.types import ConsumerRecord, TopicPartition
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.records import BATCH_HEADER_SIZE, decode_batch

log = logging.getLogger(__name__)

_BATCH_PREFIX = struct.Struct(">qi")  # baseOffset, batchLength
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LOG_OVERHEAD = 12
_FETCH_BY_TOPIC_ID = 13  # the first Fetch version that names topics by id only
_CONTROL_ABORT = 0
_ISOLATION = {"read_uncommitted": 0, "read_committed": 1}


@dataclass(slots=True)
class _CompletedFetch:
    """The records of one partition from one Fetch response, consumed batch by batch."""

    tp: TopicPartition
    epoch: int
    records: memoryview
    pos: int = 0
    pending: list[ConsumerRecord] = field(default_factory=list)
    pending_index: int = 0
    batch_next_offset: int = -1
    aborted: list[tuple[int, int]] = field(default_factory=list)  # (first offset, producer id)
    aborted_pids: set[int] = field(default_factory=set)


def next_fetch_offset(records: memoryview | bytes) -> int | None:
    """The offset after the last complete batch in ``records``; None if none is complete."""
    pos, end, next_offset = 0, len(records), None
    while end - pos >= BATCH_HEADER_SIZE:
        base_offset, batch_length = _BATCH_PREFIX.unpack_from(records, pos)
        size = batch_length + _LOG_OVERHEAD
        if size < BATCH_HEADER_SIZE or pos + size > end:
            break
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(records, pos + 23)
        next_offset = base_offset + delta + 1
        pos += size
    return next_offset


class Fetcher:
    """Keeps fetches in flight for the assigned partitions and decodes what they return."""

    def __init__(self, config: ConsumerConfig, cluster: Cluster, subs: SubscriptionState) -> None:
        self._config = config
        self._cluster = cluster
        self._subs = subs
        self._completed: deque[_CompletedFetch] = deque()
        self._buffered_bytes = 0
        self._buffer_limit_bytes = config.queued_max_messages_kbytes * 1024
        self._in_flight_nodes: set[int] = set()
        self._fetching: set[TopicPartition] = set()
        # A partition whose fetch failed (e.g. OFFSET_OUT_OF_RANGE with auto.offset.reset
        # none): its error, raised once by drain(), and the partition's epoch then; it is
        # not fetched again until a seek or reset moves its epoch on.
        self._errors: dict[TopicPartition, tuple[int, errors.KafkaError]] = {}
        self._failed: dict[TopicPartition, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._wakeup = asyncio.Event()
        self.data_ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._backoff_s = config.retry_backoff_ms / 1000

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def wakeup(self) -> None:
        self._wakeup.set()

    async def close(self) -> None:
        tasks = [t for t in (self._task, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._task = None

    def drop(self, tps: set[TopicPartition] | None = None) -> None:
        """Forget queued data and fetch errors of ``tps`` (all when None): after a seek or
        a revocation."""
        for failures in (self._errors, self._failed):
            for tp in list(failures) if tps is None else tps & failures.keys():
                del failures[tp]
        kept = deque(cf for cf in self._completed if tps is not None and cf.tp not in tps)
        for cf in self._completed:
            if tps is None or cf.tp in tps:
                self._buffered_bytes -= len(cf.records)
        self._completed = kept
        if not kept:
            self.data_ready.clear()
        self.wakeup()

    # -- fetching ------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            self._wakeup.clear()
            try:
                self._send_fetches()
            except errors.KafkaError as exc:
                log.warning("fetch planning failed: %s", exc)
            await self._wakeup.wait()

    def _send_fetches(self) -> None:
        if self._buffered_bytes >= self._buffer_limit_bytes:
            return
        metadata = self._cluster.metadata
        by_node: dict[int, list[tuple[TopicPartition, PartitionState]]] = {}
        for tp in self._subs.fetchable():
            if tp in self._fetching:
                continue
            failed_at = self._failed.get(tp)
            if failed_at is not None:
                if failed_at == self._subs.assignment[tp].epoch:
                    continue  # its error stands until a seek
                del self._failed[tp]
            leader = metadata.leader(tp)
            if leader < 0:
                self._cluster.add_topics([tp.topic])
                self._cluster.request_refresh()
                continue
            if leader not in self._in_flight_nodes:
                by_node.setdefault(leader, []).append((tp, self._subs.assignment[tp]))
        for node, partitions in by_node.items():
            self._in_flight_nodes.add(node)
            self._fetching.update(tp for tp, _ in partitions)
            task = asyncio.get_running_loop().create_task(self._fetch(node, partitions))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _fetch(
        self, node: int, partitions: list[tuple[TopicPartition, PartitionState]]
    ) -> None:
        requested = {tp: (state.epoch, state.fetch_offset) for tp, state in partitions}
        try:
            conn = await self._cluster.connection(node)
            version = conn.api_version(ApiKey.FETCH)
            ids = self._topic_ids(partitions)
            if ids is None:
                version = min(version, _FETCH_BY_TOPIC_ID - 1)
                ids = {}
            response = await conn.send(
                ApiKey.FETCH,
                self._request_body(partitions, ids),
                version=version,
                timeout_ms=self._config.request_timeout_ms + self._config.fetch_max_wait_ms,
            )
            errors.check_error(response.get("error_code", 0), f"Fetch from broker {node}")
            names = {topic_id: name for name, topic_id in ids.items()}
            for topic in response["responses"]:
                name = topic["topic"] or names.get(topic["topic_id"], "")
                for part in topic["partitions"]:
                    tp = TopicPartition(name, part["partition_index"])
                    if tp in requested:
                        self._handle_partition(tp, part, *requested[tp])
        except errors.KafkaError as exc:
            log.debug("fetch from broker %s failed: %s", node, exc)
            self._cluster.request_refresh()
            await asyncio.sleep(self._backoff_s)
        finally:
            self._in_flight_nodes.discard(node)
            self._fetching.difference_update(requested)
            self.wakeup()

    def _topic_ids(
        self, partitions: list[tuple[TopicPartition, PartitionState]]
    ) -> dict[str, uuid.UUID] | None:
        """The id of each topic in ``partitions``, or None if one has none."""
        ids: dict[str, uuid.UUID] = {}
        topics = self._cluster.metadata.topics
        for tp, _ in partitions:
            info = topics.get(tp.topic)
            if info is None or info.topic_id == NO_TOPIC_ID:
                return None
            ids[tp.topic] = info.topic_id
        return ids

    def _request_body(
        self, partitions: list[tuple[TopicPartition, PartitionState]], ids: dict[str, uuid.UUID]
    ) -> dict[str, Any]:
        topics: dict[str, list[dict[str, int]]] = {}
        for tp, state in partitions:
            assert state.fetch_offset is not None
            topics.setdefault(tp.topic, []).append(
                {
                    "partition": tp.partition,
                    "current_leader_epoch": -1,
                    "fetch_offset": state.fetch_offset,
                    "log_start_offset": -1,
                    "partition_max_bytes": self._config.max_partition_fetch_bytes,
                }
            )
        return {
            "replica_id": -1,
            "max_wait_ms": self._config.fetch_max_wait_ms,
            "min_bytes": self._config.fetch_min_bytes,
            "max_bytes": self._config.fetch_max_bytes,
            "isolation_level": _ISOLATION[self._config.isolation_level],
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {"topic": t, "topic_id": ids.get(t, NO_TOPIC_ID), "partitions": ps}
                for t, ps in topics.items()
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }

    def _handle_partition(
        self, tp: TopicPartition, part: dict[str, Any], epoch: int, offset: int | None
    ) -> None:
        state = self._subs.assignment.get(tp)
        if state is None or state.epoch != epoch or state.fetch_offset != offset:
            return  # sought, reset or revoked while the fetch was in flight
        code = part["error_code"]
        if code == ErrorCode.NONE:
            state.high_watermark = part["high_watermark"]
            state.last_stable_offset = part.get("last_stable_offset", -1)
            state.log_start_offset = part.get("log_start_offset", -1)
            records = part["records"]
            if not records:
                return
            next_offset = next_fetch_offset(records)
            if next_offset is None or next_offset <= (offset or 0):
                return
            state.fetch_offset = next_offset
            aborted = sorted(
                (a["first_offset"], a["producer_id"])
                for a in part.get("aborted_transactions") or ()
            )
            view = records if isinstance(records, memoryview) else memoryview(records)
            self._completed.append(_CompletedFetch(tp, epoch, view, aborted=aborted))
            self._buffered_bytes += len(view)
            self.data_ready.set()
        elif code == ErrorCode.OFFSET_OUT_OF_RANGE and self._subs.default_reset != "none":
            log.info(
                "%s: offset %s out of range, resetting to %s", tp, offset, self._subs.default_reset
            )
            state.position = state.fetch_offset = None
            state.reset_to = self._subs.default_reset
            state.epoch += 1
        elif code in errors.METADATA_ERRORS:
            self._cluster.request_refresh()
        else:
            where = f"{tp.topic}-{tp.partition}"
            error = errors.kafka_error(code, f"fetching {where} at offset {offset}")
            self._errors[tp] = (epoch, error)
            self._failed[tp] = epoch
            self.data_ready.set()

    # -- decoding ------------------------------------------------------------------------

    def drain(self, max_records: int) -> list[ConsumerRecord]:
        """Decode and return up to ``max_records`` records; raise a stored fetch error.

        A partition's fetch error is raised once, unless a seek (or revocation) came
        since; the partition is not fetched again until a seek.
        """
        while self._errors:
            tp, (epoch, error) = next(iter(self._errors.items()))
            del self._errors[tp]
            state = self._subs.assignment.get(tp)
            if state is not None and state.epoch == epoch:
                raise error
        out: list[ConsumerRecord] = []
        deferred: list[_CompletedFetch] = []
        while self._completed and len(out) < max_records:
            cf = self._completed[0]
            state = self._subs.assignment.get(cf.tp)
            if state is None or state.epoch != cf.epoch or state.position is None:
                self._release(self._completed.popleft())
                continue
            if state.paused:
                deferred.append(self._completed.popleft())
                continue
            if self._take(cf, state, max_records - len(out), out):
                self._release(self._completed.popleft())
        self._completed.extendleft(reversed(deferred))
        if not self._completed or all(
            self._subs.assignment.get(cf.tp, _PAUSED).paused for cf in self._completed
        ):
            self.data_ready.clear()
        return out

    def _release(self, cf: _CompletedFetch) -> None:
        self._buffered_bytes -= len(cf.records)
        if self._buffered_bytes < self._buffer_limit_bytes:
            self.wakeup()

    def _take(
        self, cf: _CompletedFetch, state: PartitionState, limit: int, out: list[ConsumerRecord]
    ) -> bool:
        """Move up to ``limit`` records of ``cf`` to ``out``; True once ``cf`` is exhausted."""
        while limit > 0:
            if cf.pending_index < len(cf.pending):
                chunk = cf.pending[cf.pending_index : cf.pending_index + limit]
                cf.pending_index += len(chunk)
                out += chunk
                limit -= len(chunk)
                state.position = chunk[-1].offset + 1
                if cf.pending_index < len(cf.pending):
                    return False
            if cf.batch_next_offset > (state.position or 0):
                state.position = cf.batch_next_offset  # past gaps and skipped records
            if not self._next_batch(cf, state):
                return True
        return False

    def _next_batch(self, cf: _CompletedFetch, state: PartitionState) -> bool:
        """Decode the batch at ``cf.pos`` into ``cf.pending``; False when none is left."""
        records = cf.records
        if len(records) - cf.pos < BATCH_HEADER_SIZE:
            return False
        (batch_length,) = struct.unpack_from(">i", records, cf.pos + 8)
        if cf.pos + batch_length + _LOG_OVERHEAD > len(records):
            return False  # a partial batch at the end of the response
        header, decoded = decode_batch(records, cf.pos, verify_crc=self._config.check_crcs)
        cf.pos += header.size
        cf.pending = []
        cf.pending_index = 0
        cf.batch_next_offset = header.next_offset
        if self._config.read_committed and self._skip_transactional(cf, header, decoded):
            return True
        if header.is_control:
            return True
        position = state.position or 0
        topic, partition = cf.tp
        timestamp_type = int(header.timestamp_type)
        # Unpacked, not r.offset etc.: each NamedTuple field access is a call. Built
        # with tuple.__new__: a NamedTuple's own __new__ is a Python call per record.
        new = tuple.__new__
        cf.pending = [
            new(
                ConsumerRecord,
                (topic, partition, offset, timestamp, key, value, headers, timestamp_type),
            )
            for key, value, headers, timestamp, offset in decoded
            if offset >= position
        ]
        return True

    @staticmethod
    def _skip_transactional(cf: _CompletedFetch, header: Any, decoded: list[Any]) -> bool:
        """read_committed: whether the batch belongs to an aborted transaction."""
        if not header.is_transactional:
            return False
        while cf.aborted and cf.aborted[0][0] <= header.last_offset:
            cf.aborted_pids.add(cf.aborted.pop(0)[1])
        if header.is_control:
            key = decoded[0].key if decoded else None
            if key is not None and len(key) >= 4:
                (control_type,) = struct.unpack_from(">h", key, 2)
                if control_type == _CONTROL_ABORT:
                    cf.aborted_pids.discard(header.producer_id)
            return True
        return header.producer_id in cf.aborted_pids


_PAUSED = PartitionState(paused=True)
