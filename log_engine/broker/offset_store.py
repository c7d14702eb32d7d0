"""Committed consumer-group offsets, kept in the compacted ``__consumer_offsets`` topic.

Records use Kafka's layouts, so tools that read that topic understand them:

- key (version 1): ``int16 version, string group, string topic, int32 partition``
- value (version 3): ``int16 version, int64 offset, int32 leader_epoch,
  string metadata, int64 commit_timestamp``; a null value (tombstone) deletes.

A group's records go to partition ``abs(javaHashCode(group)) % partitions``, as
Kafka places them (:func:`offsets_partition`).

Two modes:

- **single node** (:meth:`OffsetStore.local`): the topic is a local one, created
  with ``offsets.topic.num.partitions`` partitions and read back whole at start;
  every commit appends one batch and is visible at once.
- **cluster** (:meth:`OffsetStore.replicated`): the topic is a replicated topic
  of the cluster; this store holds only the partitions whose groups this broker
  coordinates (see ``group_ownership.py``): :meth:`read_partition` reads one
  from its local replica, :meth:`install` / :meth:`unload` add and drop its
  groups. A commit appends through the partition's leader path and is
  answered once the high watermark covers it (acks=all), with Kafka's
  coordinator errors otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass

from log_engine.broker.partition import Partition
from log_engine.broker.topics import OFFSETS_TOPIC, TopicManager, TopicSpec
from log_engine.errors import ErrorCode, KafkaError, KafkaStorageError
from log_engine.invariants import check
from log_engine.records import Record, build_batch, decode_batch, iter_batches

log = logging.getLogger(__name__)

_KEY_VERSION = 1
_VALUE_VERSION = 3
_READ_CHUNK_BYTES = 8 << 20


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """A committed position of a group in one partition."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int


TopicPartition = tuple[str, int]
GroupOffsets = dict[str, dict[TopicPartition, CommittedOffset]]

# How Kafka's group coordinator answers a commit whose append failed (retriable ones
# send the client to FindCoordinator again).
_APPEND_ERRORS = {
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
}


def offsets_partition(group: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition of ``group`` (Kafka's placement)."""
    return _java_abs(_java_string_hash(group)) % partitions


class OffsetStore:
    """Reads and writes group offsets through the ``__consumer_offsets`` partitions."""

    def __init__(
        self,
        topics: TopicManager,
        partition_count: Callable[[], int],
        commit_timeout_ms: int,
        replicated: bool,
    ) -> None:
        self._topics = topics
        self._partition_count = partition_count
        self._commit_timeout_ms = commit_timeout_ms
        self.replicated = replicated
        self._offsets: GroupOffsets = {}
        self._loaded: set[int] = set()
        """Partitions whose groups this store holds (every one on a single node)."""

    @classmethod
    def local(cls, topics: TopicManager, num_partitions: int, segment_bytes: int) -> OffsetStore:
        """A single node's store: the local topic (created if needed), read back whole."""
        if not topics.exists(OFFSETS_TOPIC):
            topics.create(
                TopicSpec(
                    OFFSETS_TOPIC,
                    num_partitions,
                    1,
                    {"cleanup.policy": "compact", "segment.bytes": str(segment_bytes)},
                )
            )
        count = len(topics.partitions(OFFSETS_TOPIC))
        store = cls(topics, lambda: count, commit_timeout_ms=0, replicated=False)
        records = 0
        for partition in topics.partitions(OFFSETS_TOPIC):
            loaded, read = read_offsets(partition, partition.high_watermark)
            store.install(partition.index, loaded)
            records += read
        log.info("loaded %d offset records for %d groups", records, len(store.groups()))
        return store

    @classmethod
    def replicated_store(
        cls, topics: TopicManager, partition_count: Callable[[], int], commit_timeout_ms: int
    ) -> OffsetStore:
        """A clustered broker's store: empty until it leads and loads partitions."""
        return cls(topics, partition_count, commit_timeout_ms, replicated=True)

    def partition_of(self, group: str) -> int:
        return offsets_partition(group, self._partition_count())

    def groups(self) -> list[str]:
        return [group for group, offsets in self._offsets.items() if offsets]

    def fetch(self, group: str) -> dict[TopicPartition, CommittedOffset]:
        return dict(self._offsets.get(group, {}))

    # -- loading (cluster) -------------------------------------------------------------

    def install(self, index: int, offsets: GroupOffsets) -> None:
        """Hold the groups read from partition ``index`` (replacing what was held of it)."""
        self.unload(index)
        for group, committed in offsets.items():
            if committed:
                self._offsets[group] = committed
        self._loaded.add(index)

    def unload(self, index: int) -> list[str]:
        """Forget partition ``index``'s groups; returns their ids."""
        self._loaded.discard(index)
        count = self._partition_count()
        gone = [g for g in self._offsets if offsets_partition(g, count) == index]
        for group in gone:
            del self._offsets[group]
        return gone

    def holds(self, index: int) -> bool:
        return index in self._loaded

    # -- commits -----------------------------------------------------------------------

    async def commit(self, group: str, offsets: dict[TopicPartition, CommittedOffset]) -> int:
        """Durably append the offsets (one batch), then make them visible.

        Returns an error code: 0 once committed (on a replicated partition: the
        high watermark covers the batch); NOT_COORDINATOR when this broker does
        not lead the group's partition; COORDINATOR_NOT_AVAILABLE when the ISR
        is below ``min.insync.replicas`` (nothing appended) or the replicas did
        not confirm within ``offsets.commit.timeout.ms``. A failed commit leaves
        the previously committed offsets in place.
        """
        if not offsets:
            return ErrorCode.NONE
        index = self.partition_of(group)
        partition = self._topics.partition(OFFSETS_TOPIC, index)
        if partition is None or not self.holds(index) or not partition.is_leader:
            return ErrorCode.NOT_COORDINATOR
        replicated = partition.state is not None
        if replicated and partition.isr_size < partition.log.config.min_insync_replicas:
            log.info(
                "offset commit of group %s refused: the ISR of %s-%d has %d replicas, "
                "min.insync.replicas is %d",
                group,
                OFFSETS_TOPIC,
                index,
                partition.isr_size,
                partition.log.config.min_insync_replicas,
            )
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        records = [
            Record(_encode_key(group, topic, p), _encode_value(committed))
            for (topic, p), committed in offsets.items()
        ]
        try:
            outcome = partition.append(build_batch(records))
        except KafkaStorageError as exc:
            log.warning("offset commit of group %s failed: %s", group, exc)
            return ErrorCode.NOT_COORDINATOR
        except KafkaError as exc:
            log.warning("offset commit of group %s failed: %s", group, exc)
            return _APPEND_ERRORS.get(ErrorCode(exc.errno), ErrorCode.UNKNOWN_SERVER_ERROR)
        if partition.leader_state is not None:
            code = await self._wait_replicated(partition, outcome.next_offset)
            if code:
                log.info("offset commit of group %s not replicated: error %d", group, code)
                return _APPEND_ERRORS.get(ErrorCode(code), ErrorCode.COORDINATOR_NOT_AVAILABLE)
            if not self.holds(index):
                return ErrorCode.NOT_COORDINATOR  # unloaded while it waited
        self._offsets.setdefault(group, {}).update(offsets)
        return ErrorCode.NONE

    async def _wait_replicated(self, partition: Partition, next_offset: int) -> int:
        future = partition.wait_replicated(next_offset)
        try:
            return await asyncio.wait_for(future, self._commit_timeout_ms / 1000)
        except TimeoutError:
            return ErrorCode.REQUEST_TIMED_OUT

    def delete_group(self, group: str) -> None:
        """Write tombstones for every offset of ``group`` and forget it."""
        offsets = self._offsets.pop(group, {})
        if offsets:
            records = [Record(_encode_key(group, t, p), None) for t, p in offsets]
            self._partition_for(group).append(build_batch(records))

    def _partition_for(self, group: str) -> Partition:
        index = self.partition_of(group)
        partition = self._topics.partition(OFFSETS_TOPIC, index)
        check(partition is not None, f"{OFFSETS_TOPIC}-{index} is missing")
        return partition  # type: ignore[return-value]


def read_offsets(partition: Partition, end_offset: int) -> tuple[GroupOffsets, int]:
    """The committed offsets in ``partition``'s local log below ``end_offset``, and how
    many records were read."""
    offsets: GroupOffsets = {}
    count = 0
    offset = partition.log_start_offset
    while offset < end_offset:
        data = partition.log.read(offset, _READ_CHUNK_BYTES).read_bytes()
        if not data:
            break
        for position, header in iter_batches(data, verify_crc=False):
            if header.base_offset >= end_offset:
                return offsets, count
            _, records = decode_batch(data, position, verify_crc=False)
            for record in records:
                _apply(offsets, record)
                count += 1
            offset = header.next_offset
    return offsets, count


def _apply(offsets: GroupOffsets, record: Record) -> None:
    if record.key is None:
        return
    decoded = _decode_key(record.key)
    if decoded is None:
        return
    group, topic, partition = decoded
    if record.value is None:
        offsets.get(group, {}).pop((topic, partition), None)
    else:
        offsets.setdefault(group, {})[(topic, partition)] = _decode_value(record.value)


def _encode_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def _decode_string(data: bytes, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from(">h", data, pos)
    pos += 2
    return data[pos : pos + length].decode(), pos + length


def _encode_key(group: str, topic: str, partition: int) -> bytes:
    return (
        struct.pack(">h", _KEY_VERSION)
        + _encode_string(group)
        + _encode_string(topic)
        + struct.pack(">i", partition)
    )


def _decode_key(data: bytes) -> tuple[str, str, int] | None:
    (version,) = struct.unpack_from(">h", data, 0)
    if version not in (0, 1):
        return None  # group metadata records (version 2) are not ours to read
    group, pos = _decode_string(data, 2)
    topic, pos = _decode_string(data, pos)
    (partition,) = struct.unpack_from(">i", data, pos)
    return group, topic, partition


def _encode_value(committed: CommittedOffset) -> bytes:
    return (
        struct.pack(">hqi", _VALUE_VERSION, committed.offset, committed.leader_epoch)
        + _encode_string(committed.metadata)
        + struct.pack(">q", committed.commit_timestamp_ms)
    )


def _decode_value(data: bytes) -> CommittedOffset:
    version, offset = struct.unpack_from(">hq", data, 0)
    pos = 10
    epoch = -1
    if version >= 3:
        (epoch,) = struct.unpack_from(">i", data, pos)
        pos += 4
    metadata, pos = _decode_string(data, pos)
    (timestamp,) = struct.unpack_from(">q", data, pos)
    return CommittedOffset(offset, epoch, metadata, timestamp)


def _java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units, as a signed int32."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _java_abs(n: int) -> int:
    return 0 if n == -(1 << 31) else abs(n)
