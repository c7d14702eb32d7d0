"""The fetch path: collect whole stored batches as file slices, never decoding records.

:class:`BatchCollector` walks batch headers from the offset index's starting
point in the segment holding the fetch offset, then on through later
segments, and stops before a batch that reaches the limit offset (the high
watermark) or would pass ``max_bytes``. With ``min_one_batch`` the first batch
is returned whole even when larger than ``max_bytes`` (KIP-74), so a consumer
always makes progress. Each segment touched contributes one contiguous slice.

:func:`find_offset_for_timestamp` serves ListOffsets by time: segment max
timestamps, then the time index, offset index and batch headers find the
batch; only that one batch is decoded, to name the exact record.
"""

from __future__ import annotations

from collections.abc import Sequence

from log_engine.file_slice import FileSlice
from log_engine.records import decode_batch
from log_engine.storage.segment import LogSegment
from log_engine.storage.types import ReadResult


class BatchCollector:
    """Accumulates whole batches across segments for one read."""

    def __init__(self, offset: int, max_bytes: int, limit_offset: int, min_one_batch: bool) -> None:
        self.offset = offset
        self.max_bytes = max_bytes
        self.limit_offset = limit_offset
        self.min_one_batch = min_one_batch
        self.slices: list[FileSlice] = []
        self.size = 0
        self.first_offset = -1
        self.next_offset = -1
        self.done = offset >= limit_offset

    def collect(self, segment: LogSegment) -> None:
        """Add the batches of ``segment`` that the read still wants (one slice)."""
        _, start = segment.offset_index.lookup(self.offset)
        run_start = -1
        pos = start
        for header in segment.iter_headers(start):
            if header.last_offset < self.offset:
                pos += header.size
                continue
            if header.last_offset >= self.limit_offset or not self._fits(
                pos, run_start, header.size
            ):
                self.done = True
                break
            if run_start < 0:
                run_start = pos
            if self.first_offset < 0:
                self.first_offset = header.base_offset
            self.next_offset = header.next_offset
            pos += header.size
            if self.size + pos - run_start >= self.max_bytes:
                self.done = True
                break
        if run_start >= 0:
            self.slices.append(segment.slice(run_start, pos - run_start))
            self.size += pos - run_start

    def _fits(self, pos: int, run_start: int, size: int) -> bool:
        taken = self.size + (pos - run_start if run_start >= 0 else 0)
        return taken + size <= self.max_bytes or (self.min_one_batch and self.first_offset < 0)

    def result(self) -> ReadResult:
        return ReadResult(self.slices, self.size, self.first_offset, self.next_offset)


def find_offset_for_timestamp(
    segments: Sequence[LogSegment], timestamp_ms: int, log_start_offset: int
) -> tuple[int, int] | None:
    """``(offset, timestamp)`` of the first record at or after ``log_start_offset`` whose
    timestamp is >= ``timestamp_ms``, or None."""
    for segment in segments:
        found = segment.find_timestamp(timestamp_ms)
        if found is None:
            continue
        for pos, header in segment.iter_batches(found[0]):
            if header.max_timestamp < timestamp_ms or header.last_offset < log_start_offset:
                continue
            _, records = decode_batch(segment.read_at(pos, header.size), verify_crc=False)
            for record in records:
                if record.offset >= log_start_offset and record.timestamp >= timestamp_ms:
                    return record.offset, record.timestamp
    return None
