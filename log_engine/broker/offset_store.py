"""Committed consumer-group offsets, kept in the compacted ``__consumer_offsets`` topic.

Records use Kafka's layouts, so tools that read that topic understand them:

- key (version 1): ``int16 version, string group, string topic, int32 partition``
- value (version 3): ``int16 version, int64 offset, int32 leader_epoch,
  string metadata, int64 commit_timestamp``; a null value (tombstone) deletes.

A group's records go to partition ``abs(javaHashCode(group)) % partitions``, as
Kafka places them. On start the whole topic is read back into memory; after
that the map serves OffsetFetch and every commit appends one batch.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

from log_engine.broker.partition import Partition
from log_engine.broker.topics import OFFSETS_TOPIC, TopicManager, TopicSpec
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


class OffsetStore:
    """Reads and writes group offsets through the local ``__consumer_offsets`` logs."""

    def __init__(self, topics: TopicManager, num_partitions: int, segment_bytes: int) -> None:
        self._topics = topics
        self._offsets: dict[str, dict[TopicPartition, CommittedOffset]] = {}
        if not topics.exists(OFFSETS_TOPIC):
            topics.create(
                TopicSpec(
                    OFFSETS_TOPIC,
                    num_partitions,
                    1,
                    {"cleanup.policy": "compact", "segment.bytes": str(segment_bytes)},
                )
            )
        self._num_partitions = len(topics.partitions(OFFSETS_TOPIC))
        self._load()

    def groups(self) -> list[str]:
        return [group for group, offsets in self._offsets.items() if offsets]

    def fetch(self, group: str) -> dict[TopicPartition, CommittedOffset]:
        return dict(self._offsets.get(group, {}))

    def commit(self, group: str, offsets: dict[TopicPartition, CommittedOffset]) -> None:
        """Durably append the offsets (one batch), then make them visible."""
        if not offsets:
            return
        records = [
            Record(_encode_key(group, topic, partition), _encode_value(committed))
            for (topic, partition), committed in offsets.items()
        ]
        self._partition_for(group).append(build_batch(records))
        self._offsets.setdefault(group, {}).update(offsets)

    def delete_group(self, group: str) -> None:
        """Write tombstones for every offset of ``group`` and forget it."""
        offsets = self._offsets.pop(group, {})
        if offsets:
            records = [Record(_encode_key(group, t, p), None) for t, p in offsets]
            self._partition_for(group).append(build_batch(records))

    def _partition_for(self, group: str) -> Partition:
        index = _java_abs(_java_string_hash(group)) % self._num_partitions
        partition = self._topics.partition(OFFSETS_TOPIC, index)
        check(partition is not None, f"{OFFSETS_TOPIC}-{index} is missing")
        return partition  # type: ignore[return-value]

    def _load(self) -> None:
        count = 0
        for partition in self._topics.partitions(OFFSETS_TOPIC):
            offset = partition.log_start_offset
            while offset < partition.high_watermark:
                data = partition.log.read(offset, _READ_CHUNK_BYTES).read_bytes()
                if not data:
                    break
                for position, header in iter_batches(data, verify_crc=False):
                    _, records = decode_batch(data, position, verify_crc=False)
                    for record in records:
                        self._apply(record)
                        count += 1
                    offset = header.next_offset
        log.info("loaded %d offset records for %d groups", count, len(self.groups()))

    def _apply(self, record: Record) -> None:
        if record.key is None:
            return
        decoded = _decode_key(record.key)
        if decoded is None:
            return
        group, topic, partition = decoded
        if record.value is None:
            self._offsets.get(group, {}).pop((topic, partition), None)
        else:
            self._offsets.setdefault(group, {})[(topic, partition)] = _decode_value(record.value)


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
