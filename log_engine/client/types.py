"""The client's small vocabulary: partitions, delivered and consumed records, offsets."""

from __future__ import annotations

from typing import NamedTuple

Header = tuple[str, bytes | None]


class TopicPartition(NamedTuple):
    """One partition of one topic; hashable, so it keys every per-partition table."""

    topic: str
    partition: int


class RecordMetadata(NamedTuple):
    """Where a produced record landed. ``offset`` is -1 when acks=0 (never acknowledged)."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class ConsumerRecord(NamedTuple):
    """A record returned by ``Consumer.poll``, with its absolute offset.

    ``timestamp_type`` is Kafka's: 0 CreateTime (the producer's timestamp), 1
    LogAppendTime (the broker's, for topics with ``message.timestamp.type=
    LogAppendTime``).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    timestamp_type: int = 0


class OffsetAndMetadata(NamedTuple):
    """A committed position: the offset of the next record to read, plus free-form metadata."""

    offset: int
    metadata: str = ""
