"""The fetch path: collect whole stored batches as file slices, never decoding records.

:class:`BatchCollector` finds the batch holding the fetch offset (offset index,
then a few batch headers), then the end of the read: the last batch boundary
within ``max_bytes`` whose batches all end below the limit offset (the high
watermark). The end is found through the offset index too, so a large read
reads only a couple of headers instead of one per batch. Reads continue into
later segments while budget remains; each segment touched is one slice. With
``min_one_batch`` the first batch is returned whole even when larger than
``max_bytes`` (KIP-74), so a consumer always makes progress.

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
        found = segment.find_batch(self.offset)
        if found is None:
            return  # this segment ends before the offset (or is empty): try the next one
        start, first = found
        if first.last_offset >= self.limit_offset:
            self.done = True
            return
        budget = self.max_bytes - self.size
        end, next_offset = _batch_boundary(segment, start, start + budget, self.limit_offset)
        if end == start and self.min_one_batch and self.first_offset < 0:
            end, next_offset = start + first.size, first.next_offset
        if end > start:
            if self.first_offset < 0:
                self.first_offset = first.base_offset
            self.slices.append(segment.slice(start, end - start))
            self.size += end - start
            self.next_offset = next_offset
        if end < segment.size or self.size >= self.max_bytes:
            self.done = True

    def result(self) -> ReadResult:
        return ReadResult(self.slices, self.size, self.first_offset, self.next_offset)


def _batch_boundary(
    segment: LogSegment, start: int, max_position: int, limit_offset: int
) -> tuple[int, int]:
    """``(end, next offset)``: the furthest batch end <= ``max_position`` from ``start`` whose
    batches all end below ``limit_offset``; ``(start, -1)`` when not even one batch fits."""
    max_position = min(max_position, segment.size)
    entry = segment.offset_index.last_entry_before(max_position, limit_offset)
    scan_from = entry[1] if entry is not None and entry[1] > start else start
    end, next_offset = _scan(segment, scan_from, max_position, limit_offset)
    if end == scan_from and scan_from > start:
        # the indexed batch does not fit: its predecessor (from an earlier entry) ends here
        previous = segment.offset_index.entry_before(scan_from)
        rescan = previous[1] if previous is not None and previous[1] > start else start
        end, next_offset = _scan(segment, rescan, max_position, limit_offset)
    return end, next_offset


def _scan(segment: LogSegment, pos: int, max_position: int, limit_offset: int) -> tuple[int, int]:
    next_offset = -1
    for header in segment.iter_headers(pos):
        if pos + header.size > max_position or header.last_offset >= limit_offset:
            break
        pos += header.size
        next_offset = header.next_offset
    return pos, next_offset


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
