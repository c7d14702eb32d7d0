"""One Kafka partition's open objects in the S3 sink: buffering, rotation, and writing batches.

A :class:`PartitionWriter` owns the records of one Kafka partition taken
since its last written batch, as one buffer per encoded partition. A batch is
written (rotation) when:

- ``flush.size`` records were added (counted over all its buffers);
- the next record's time is ``rotate.interval.ms`` past the batch's first
  (record time, so the same records make the same batches after a restart);
- an object cannot hold the next record (a Parquet schema change);
- ``rotate.schedule.interval.ms`` passed on the wall clock since it opened.

Writing a batch uploads its other objects first and its head (the object
named by the batch's first offset) last; see :mod:`connectors.s3.recovery`.
Batches are written by an :class:`~connectors.s3.uploader.Uploader` (in the
background, in order); ``committed_offset`` moves when a whole batch is in S3.
A failed write is retried by the uploader before anything else (the task
turns the failure into a RetriableError). Records at offsets already taken
are skipped, so a batch redelivered after a RetriableError is not taken twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from connectors.api import SinkRecord, TopicPartition
from connectors.s3.formats import FileBuffer, ObjectFormat
from connectors.s3.naming import object_key
from connectors.s3.recovery import META_BATCH_END, META_BATCH_START, META_RECORDS
from connectors.s3.uploader import Uploader

log = logging.getLogger(__name__)

#: Writes one object: (key, data, metadata) -> None; raises on failure.
Upload = Callable[[str, bytes, dict[str, str]], None]


@dataclass(slots=True)
class Encoded:
    """A record checked by the format and partitioner (``payload`` None: skip it)."""

    record: SinkRecord
    encoded_partition: str
    payload: Any
    timestamp_ms: int | None


@dataclass(slots=True)
class _OpenObject:
    start_offset: int
    buffer: FileBuffer


@dataclass(slots=True)
class _Batch:
    """A batch closed for writing: objects (key, bytes, records) with the head last."""

    objects: list[tuple[str, bytes, int]]
    start_offset: int
    end_offset: int
    written: int = 0


@dataclass(frozen=True, slots=True)
class RotationPolicy:
    flush_size: int
    rotate_interval_ms: int
    rotate_schedule_interval_ms: int


class PartitionWriter:
    """Buffers and writes the objects of one Kafka partition."""

    def __init__(
        self,
        tp: TopicPartition,
        fmt: ObjectFormat,
        topics_dir: str,
        policy: RotationPolicy,
        upload: Upload,
        start_offset: int | None,
        uploader: Uploader,
    ) -> None:
        self.tp = tp
        self._format = fmt
        self._topics_dir = topics_dir
        self._policy = policy
        self._upload = upload
        self._uploader = uploader
        self.committed_offset = start_offset  # next offset after what S3 holds
        self.next_offset = start_offset  # records below this were taken already
        self._open: dict[str, _OpenObject] = {}
        self._count = 0
        self._first_offset: int | None = None
        self._last_offset: int | None = None
        self._first_ts: int | None = None
        self._opened_at = 0.0
        self.objects_written = 0
        self.bytes_written = 0
        self.first_written_at: float | None = None  # epoch seconds, when S3 answered
        self.last_written_at: float | None = None

    @property
    def buffered(self) -> int:
        return self._count

    def add(self, item: Encoded) -> None:
        """Take one checked record (may close a batch before or after it)."""
        offset = item.record.kafka_offset
        if self.next_offset is not None and offset < self.next_offset:
            return  # taken before (a redelivered batch)
        if item.payload is not None:
            if item.timestamp_ms is not None and self._interval_passed(item.timestamp_ms):
                self.rotate()
            current = self._open.get(item.encoded_partition)
            if current is not None and not current.buffer.accepts(item.payload):
                self.rotate()
                current = None
            if current is None:
                if not self._count:
                    self._first_offset = offset
                    self._first_ts = item.timestamp_ms
                    self._opened_at = time.monotonic()
                current = _OpenObject(offset, self._format.new_buffer())
                self._open[item.encoded_partition] = current
            current.buffer.add(item.payload)
            self._count += 1
            self._last_offset = offset
        self.next_offset = offset + 1
        if self._count >= self._policy.flush_size:
            self.rotate()

    def add_run(
        self, records: Sequence[SinkRecord], payloads: Sequence[Any], encoded_partition: str
    ) -> None:
        """Take checked records of this partition, in offset order, none null, all of
        ``encoded_partition``, without record-time rotation: ``add`` for each, by slices."""
        start, end = 0, len(records)
        if self.next_offset is not None:
            while start < end and records[start].kafka_offset < self.next_offset:
                start += 1  # taken before (a redelivered batch)
        flush_size = self._policy.flush_size
        while start < end:
            current = self._open.get(encoded_partition)
            if current is None:
                offset = records[start].kafka_offset
                if not self._count:
                    self._first_offset = offset
                    self._first_ts = None
                    self._opened_at = time.monotonic()
                current = _OpenObject(offset, self._format.new_buffer())
                self._open[encoded_partition] = current
            take = min(end - start, flush_size - self._count)
            current.buffer.extend(payloads[start : start + take])
            self._count += take
            start += take
            self._last_offset = records[start - 1].kafka_offset
            self.next_offset = self._last_offset + 1
            if self._count >= flush_size:
                self.rotate()

    def _interval_passed(self, timestamp_ms: int) -> bool:
        interval = self._policy.rotate_interval_ms
        if interval < 0 or not self._count or self._first_ts is None:
            return False
        return timestamp_ms - self._first_ts >= interval

    def schedule_due(self) -> bool:
        interval = self._policy.rotate_schedule_interval_ms
        if interval < 0 or not self._count:
            return False
        return (time.monotonic() - self._opened_at) * 1000 >= interval

    def rotate(self) -> None:
        """Close the open objects into a batch and write it."""
        if not self._count:
            return
        assert self._first_offset is not None and self._last_offset is not None
        tp = self.tp
        objects: list[tuple[str, bytes, int]] = []
        head: tuple[str, bytes, int] | None = None
        for encoded_partition, current in self._open.items():
            key = object_key(
                self._topics_dir,
                tp.topic,
                encoded_partition,
                tp.partition,
                current.start_offset,
                self._format.extension,
            )
            written = (key, current.buffer.finish(), current.buffer.count)
            if current.start_offset == self._first_offset:
                head = written
            else:
                objects.append(written)
        assert head is not None, "the batch's first record opened one of its objects"
        objects.append(head)  # the head last: once it exists, the whole batch does
        batch = _Batch(objects, self._first_offset, self._last_offset + 1)
        self._open.clear()
        self._count = 0
        self._first_offset = self._last_offset = self._first_ts = None
        self._uploader.submit(lambda: self._write(batch))

    def _write(self, batch: _Batch) -> None:
        """Write the batch's objects not written yet (a retry goes on where it failed)."""
        meta = {META_BATCH_START: str(batch.start_offset), META_BATCH_END: str(batch.end_offset)}
        while batch.written < len(batch.objects):
            key, data, records = batch.objects[batch.written]
            self._upload(key, data, {**meta, META_RECORDS: str(records)})
            batch.written += 1
            self.objects_written += 1
            self.bytes_written += len(data)
            self.last_written_at = time.time()
            if self.first_written_at is None:
                self.first_written_at = self.last_written_at
        self.committed_offset = batch.end_offset
        log.debug("%s: committed up to offset %d", self.tp, batch.end_offset)

    def discard(self) -> None:
        """Drop the records not closed into a batch (the partition is closed)."""
        self._open.clear()
        self._count = 0
        self._first_offset = self._last_offset = self._first_ts = None
