"""One log segment: a ``.log`` file of whole batches plus its two indexes.

Files (``NNNNNNNNNNNNNNNNNNNN`` is the base offset, 20 digits, zero padded)::

    <base>.log        RecordBatch v2 batches back to back, exactly as appended
    <base>.index      sparse offset index   (see offset_index)
    <base>.timeindex  sparse time index     (see time_index)

A suffix marks a segment's state in the file names: ``.cleaned`` (being
written by the cleaner), ``.swap`` (cleaned, replacing older segments) and
``.deleted`` (scheduled for unlinking after ``file.delete.delay.ms``).

Invariants: the log file holds only whole, valid batches (recovery cuts
anything else); batch offsets increase and are >= the base offset; the last
offset minus the base offset fits an int32 (index entries are relative). The
segment never decodes records: it reads batch headers only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from log_engine.errors import CorruptIndexError, CorruptMessageError, TruncatedBatchError
from log_engine.file_slice import FileSlice
from log_engine.invariants import check
from log_engine.records import BATCH_HEADER_SIZE, BatchHeader, read_header, validate_batch
from log_engine.storage.config import LogConfig
from log_engine.storage.offset_index import OffsetIndex
from log_engine.storage.time_index import NO_TIMESTAMP, TimeIndex
from log_engine.storage.types import BatchInfo

LOG_EXT = ".log"
INDEX_EXT = ".index"
TIME_INDEX_EXT = ".timeindex"
SEGMENT_EXTS = (LOG_EXT, INDEX_EXT, TIME_INDEX_EXT)
_INT32_MAX = 2**31 - 1
_HEADER_READ_AHEAD = 4096
_RECOVERY_CHUNK = 1 << 20


AppendMark = tuple[int, int, int]
"""A segment's size and index entry counts before an append (see ``roll_back``)."""


def file_name(base_offset: int, ext: str, suffix: str = "") -> str:
    """``00000000000000000042.log`` and friends."""
    return f"{base_offset:020d}{ext}{suffix}"


class LogSegment:
    """A ``.log`` file and its indexes; appends, header scans and file slices.

    Not thread-safe on its own: the owning PartitionLog serializes access.
    """

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        config: LogConfig,
        *,
        now_ms: int,
        suffix: str = "",
        fresh: bool,
        active: bool,
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.suffix = suffix
        self.created_ms = now_ms
        self._index_interval_bytes = config.index_interval_bytes
        self._index_bytes = config.segment_index_bytes
        flags = os.O_RDWR | os.O_CREAT | (os.O_TRUNC if fresh else 0)
        self._fd = os.open(self.path(LOG_EXT), flags, 0o644)
        if fresh:
            for ext in (INDEX_EXT, TIME_INDEX_EXT):
                self.path(ext).unlink(missing_ok=True)
        self.size = os.fstat(self._fd).st_size
        index_bytes = config.segment_index_bytes
        self.offset_index = OffsetIndex(
            self.path(INDEX_EXT), base_offset, index_bytes, active=active
        )
        self.time_index = TimeIndex(
            self.path(TIME_INDEX_EXT), base_offset, index_bytes, active=active
        )
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP
        self._offset_of_max_timestamp = base_offset
        self._first_batch_timestamp = NO_TIMESTAMP
        self._bytes_since_index_entry = 0

    def __repr__(self) -> str:
        return f"LogSegment({self.base_offset}{self.suffix}, {self.size} bytes)"

    def path(self, ext: str) -> Path:
        return self.directory / file_name(self.base_offset, ext, self.suffix)

    @property
    def fileno(self) -> int:
        return self._fd

    @property
    def is_empty(self) -> bool:
        return self.size == 0

    # -- appends ---------------------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview, batches: Sequence[BatchInfo]) -> None:
        """Write ``data`` (the batches, back to back) at the end and index them."""
        self.write_at_end(data)
        self.index_appended(batches, self.size - len(data))

    def write_at_end(self, data: bytes | bytearray | memoryview) -> None:
        """Write raw batch bytes at the end of the file (index with :meth:`index_appended`).

        ``size`` grows only once every byte is written: after an OSError (a
        short write then ENOSPC) the partial bytes lie past ``size``, where
        :meth:`roll_back` truncates them.
        """
        view = memoryview(data)
        written = os.pwrite(self._fd, view, self.size)
        if written != len(view):
            self._write_from(view[written:], self.size + written)
        self.size += len(view)

    def writev_at_end(self, parts: Sequence[bytes | bytearray | memoryview], total: int) -> None:
        """Write several buffers at the end with one ``pwritev`` (falls back on short writes)."""
        written = os.pwritev(self._fd, parts, self.size)
        if written != total:
            self._write_from(memoryview(b"".join(parts))[written:], self.size + written)
        self.size += total

    def _write_from(self, view: memoryview, position: int) -> None:
        written = 0
        while written < len(view):
            written += os.pwrite(self._fd, view[written:], position + written)

    def mark(self) -> AppendMark:
        """The segment's state before an append, for :meth:`roll_back` (cheap: 3 ints)."""
        return (self.size, self.offset_index._entries, self.time_index._entries)

    def roll_back(self, mark: AppendMark) -> None:
        """Undo a failed append: file, indexes and stats as at ``mark`` (a rare path).

        The size is restored first, so reads never see the torn bytes even if
        the truncate itself fails (recovery cuts them then); the stats are
        then re-read from the indexes and batch headers, as :meth:`load` does.
        """
        size, index_entries, time_index_entries = mark
        self.size = size
        self.offset_index.truncate_entries(min(index_entries, self.offset_index.entries))
        self.time_index.truncate_entries(min(time_index_entries, self.time_index.entries))
        try:
            os.ftruncate(self._fd, size)
        finally:
            self._reload_stats()

    def index_appended(self, batches: Sequence[BatchInfo], start: int) -> None:
        """Update stats and indexes for batches just written at file position ``start``."""
        if not batches:
            return
        check(batches[0].base_offset >= self.next_offset, "segment offsets must increase")
        if self._first_batch_timestamp == NO_TIMESTAMP and self.next_offset == self.base_offset:
            self._first_batch_timestamp = batches[0].max_timestamp
        for batch in batches:
            self._track(batch, start + batch.position)
        self.next_offset = batches[-1].last_offset + 1

    def _track(self, batch: BatchInfo, position: int) -> None:
        if batch.max_timestamp > self.max_timestamp:
            self.max_timestamp = batch.max_timestamp
            self._offset_of_max_timestamp = batch.last_offset
        if self._bytes_since_index_entry > self._index_interval_bytes:
            if not self.offset_index.is_full:
                self.offset_index.append(batch.last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self._offset_of_max_timestamp)
            self._bytes_since_index_entry = 0
        self._bytes_since_index_entry += batch.size

    def can_hold(self, last_offset: int) -> bool:
        """Whether ``last_offset`` fits this segment's int32 relative offsets."""
        return 0 <= last_offset - self.base_offset <= _INT32_MAX

    def should_roll(
        self, config: LogConfig, append_bytes: int, last_offset: int, now_ms: int
    ) -> bool:
        """Kafka's roll rule: size, age, a full index, or offsets that no longer fit."""
        if self.is_empty:
            return False
        return (
            self.size > config.segment_bytes - append_bytes
            or now_ms - self.roll_timestamp_ms > config.segment_ms
            or self.offset_index.is_full
            or self.time_index.is_full
            or not self.can_hold(last_offset)
        )

    @property
    def roll_timestamp_ms(self) -> int:
        """The first batch's max timestamp, or the segment's creation time without one."""
        if self._first_batch_timestamp >= 0:
            return self._first_batch_timestamp
        return self.created_ms

    @property
    def largest_timestamp(self) -> int:
        """Newest batch timestamp (retention's clock), or the file mtime without one."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return int(os.fstat(self._fd).st_mtime * 1000)

    # -- reads -----------------------------------------------------------------------

    def iter_headers(self, start: int = 0, end: int | None = None) -> Iterator[BatchHeader]:
        """Batch headers from file position ``start`` (a batch boundary) to ``end``.

        Reads ahead a few KiB at a time, so small batches cost one syscall per
        several headers and large ones one per batch. Use ``header_position``
        via the running sum of ``header.size`` to know where each batch starts.
        """
        end = self.size if end is None else end
        pos = start
        buf = b""
        buf_start = 0
        while pos < end:
            off = pos - buf_start
            if off + BATCH_HEADER_SIZE > len(buf):
                buf = os.pread(self._fd, min(_HEADER_READ_AHEAD, end - pos), pos)
                buf_start, off = pos, 0
            header = read_header(buf, off)
            if pos + header.size > end:
                raise TruncatedBatchError(
                    f"segment {self.base_offset}: batch at byte {pos} runs past byte {end}"
                )
            yield header
            pos += header.size

    def iter_batches(self, start: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """``(position, header)`` of each batch from file position ``start``."""
        pos = start
        for header in self.iter_headers(start):
            yield pos, header
            pos += header.size

    def find_batch(self, offset: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose last offset is >= ``offset``, via the index then headers."""
        _, start = self.offset_index.lookup(offset)
        for pos, header in self.iter_batches(start):
            if header.last_offset >= offset:
                return pos, header
        return None

    def find_timestamp(self, timestamp: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose max timestamp is >= ``timestamp``."""
        if self.max_timestamp < timestamp:
            return None
        _, offset = self.time_index.lookup(timestamp)
        _, start = self.offset_index.lookup(offset)
        for pos, header in self.iter_batches(start):
            if header.max_timestamp >= timestamp:
                return pos, header
        return None

    def slice(self, position: int, size: int) -> FileSlice:
        check(position >= 0 and position + size <= self.size, "slice past the segment end")
        return FileSlice(self._fd, position, size)

    def read_at(self, position: int, size: int) -> bytes:
        return self.slice(position, size).read()

    # -- truncation, loading, recovery -------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Drop batches whose last offset is >= ``offset``; return the bytes removed."""
        found = self.find_batch(offset)
        if found is None:
            return 0
        position = found[0]
        removed = self.size - position
        os.ftruncate(self._fd, position)
        self.size = position
        self.offset_index.truncate_to_position(position)
        self.time_index.truncate_to(found[1].base_offset)
        self._reload_stats()
        return removed

    def load(self) -> None:
        """Learn next offset and timestamps from the indexes plus a short header scan.

        Raises CorruptIndexError / CorruptMessageError when the files disagree;
        the caller then :meth:`recover`s the segment.
        """
        self.offset_index.sanity_check(self.size)
        self.time_index.sanity_check()
        self._reload_stats()
        _, time_offset = self.time_index.last_entry()
        if self.time_index.entries and time_offset >= self.next_offset:
            raise CorruptIndexError(f"{self.time_index.path}: offset {time_offset} past the log")

    def _reload_stats(self) -> None:
        self.max_timestamp, self._offset_of_max_timestamp = self.time_index.last_entry()
        self.next_offset = self.base_offset
        self._first_batch_timestamp = NO_TIMESTAMP
        self._bytes_since_index_entry = 0
        if self.size:
            self._first_batch_timestamp = next(self.iter_headers(0)).max_timestamp
        _, start = self.offset_index.last_entry()
        for header in self.iter_headers(start):
            self._bytes_since_index_entry += header.size
            self.next_offset = header.next_offset
            if header.max_timestamp > self.max_timestamp:
                self.max_timestamp = header.max_timestamp
                self._offset_of_max_timestamp = header.last_offset

    def recover(self, first_offset: int) -> tuple[int, int]:
        """Validate every batch (CRC included), rebuild both indexes, cut at the first bad one.

        ``first_offset`` is the lowest offset the first batch may have (the
        previous segment's next offset). Returns ``(valid bytes, bytes cut)``.
        """
        self.offset_index.reset()
        self.time_index.reset()
        self.make_active()
        self.max_timestamp = NO_TIMESTAMP
        self._first_batch_timestamp = NO_TIMESTAMP
        self._bytes_since_index_entry = 0
        self.next_offset = max(first_offset, self.base_offset)
        file_size = os.fstat(self._fd).st_size
        valid = 0
        for pos, header in self._scan_valid(file_size):
            if header.base_offset < self.next_offset or not self.can_hold(header.last_offset):
                break
            info = BatchInfo(
                0, header.size, header.base_offset, header.last_offset, header.max_timestamp
            )
            if valid == 0:
                self._first_batch_timestamp = header.max_timestamp
            self._track(info, pos)
            self.next_offset = header.next_offset
            valid = pos + header.size
        if valid < file_size:
            os.ftruncate(self._fd, valid)
        self.size = valid
        if valid == 0:
            self.next_offset = self.base_offset
        return valid, file_size - valid

    def _scan_valid(self, file_size: int) -> Iterator[tuple[int, BatchHeader]]:
        """Whole batches with a matching CRC, until the first bad or torn one."""
        pos = 0
        buf = b""
        buf_start = 0
        while pos < file_size:
            off = pos - buf_start
            try:
                if off + BATCH_HEADER_SIZE > len(buf):
                    buf, buf_start, off = os.pread(self._fd, _RECOVERY_CHUNK, pos), pos, 0
                header = read_header(buf, off)
                if pos + header.size > file_size:
                    return
                if off + header.size > len(buf):
                    want = max(_RECOVERY_CHUNK, header.size)
                    buf, buf_start, off = os.pread(self._fd, want, pos), pos, 0
                validate_batch(buf, off)
            except CorruptMessageError:
                return
            yield pos, header
            pos += header.size

    # -- lifecycle ---------------------------------------------------------------------

    def flush(self) -> None:
        """fsync the log and the indexes."""
        os.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()

    def make_active(self, config: LogConfig | None = None) -> None:
        """Preallocate the indexes again so this segment can take appends or a rebuild."""
        if config is not None:
            self._index_interval_bytes = config.index_interval_bytes
            self._index_bytes = config.segment_index_bytes
        self.offset_index.make_active(self._index_bytes)
        self.time_index.make_active(self._index_bytes)

    def make_inactive(self) -> None:
        """Record the final time index entry and trim both indexes (on roll and close)."""
        self.time_index.maybe_append(self.max_timestamp, self._offset_of_max_timestamp, final=True)
        self.offset_index.trim()
        self.time_index.trim()

    def rename(self, suffix: str) -> None:
        """Rename the three files to carry ``suffix`` (the log file last)."""
        self.offset_index.rename(self.directory / file_name(self.base_offset, INDEX_EXT, suffix))
        self.time_index.rename(self.directory / file_name(self.base_offset, TIME_INDEX_EXT, suffix))
        os.rename(self.path(LOG_EXT), self.directory / file_name(self.base_offset, LOG_EXT, suffix))
        self.suffix = suffix

    def close(self) -> None:
        """Trim the indexes and close every file."""
        if self._fd < 0:
            return
        self.make_inactive()
        self.offset_index.close()
        self.time_index.close()
        os.close(self._fd)
        self._fd = -1

    def abandon(self) -> None:
        """Close every file without touching it (offline dir: recovery rebuilds indexes)."""
        self.offset_index.abandon()
        self.time_index.abandon()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close_and_delete(self) -> None:
        """Close and unlink the three files (FileSlices over it become invalid)."""
        self.offset_index.close_and_delete()
        self.time_index.close_and_delete()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.path(LOG_EXT).unlink(missing_ok=True)
