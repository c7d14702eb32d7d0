"""A preallocated, memory-mapped file of fixed-size index entries.

The shared mechanics of the offset index and the time index. While its segment
is active an index file is preallocated to ``segment.index.bytes`` (rounded
down to whole entries) and mapped, so an append is a ``pack_into`` on the map;
when the segment stops being active (roll, close) the file is trimmed to its
entries, so a cleanly closed index's size is ``entries x entry size``.

Writes into a preallocated (sparse) file through the map would fault with
SIGBUS, killing the process, where the file system has no room for the page.
So an append first reserves the page it writes with ``posix_fallocate``
(one call per page of entries): a full disk then raises ENOSPC as an OSError,
before any byte changed, like every other write of the log.

Invariants: the write position is always ``entries x entry size`` and never
passes the mapped size. After a crash an active index may still be full length
with zero entries at the end: the subclasses' sanity checks reject it and the
segment rebuilds it from the log.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Any, ClassVar

from log_engine.invariants import check

_PAGE_BYTES = mmap.PAGESIZE


class IndexFile:
    """Fixed-size entries in a preallocated, mapped file (subclassed per index kind)."""

    ENTRY: ClassVar[struct.Struct]

    def __init__(self, path: Path, base_offset: int, max_index_bytes: int, *, active: bool) -> None:
        self.path = path
        self.base_offset = base_offset
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self._map: mmap.mmap | None = None
        size = os.fstat(self._fd).st_size
        self.size_is_whole_entries = size % self.ENTRY.size == 0
        self._entries = size // self.ENTRY.size
        self._position = self._entries * self.ENTRY.size
        self._max_entries = max_index_bytes // self.ENTRY.size
        self._mapped_bytes = 0
        self._reserved_bytes = self._position - self._position % _PAGE_BYTES
        self._last: tuple[Any, ...] | None = None
        if active:
            self.make_active(max_index_bytes)
        else:
            self._max_entries = self._entries
            self._resize(self._position)
        self._refresh_last()

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def max_entries(self) -> int:
        return self._max_entries

    @property
    def is_full(self) -> bool:
        return self._entries >= self._max_entries

    @property
    def size_bytes(self) -> int:
        """Bytes of real entries (the file may be preallocated longer)."""
        return self._position

    def entry(self, index: int) -> tuple[Any, ...]:
        """The raw fields of entry ``index`` (0-based)."""
        check(0 <= index < self._entries, "index entry out of range")
        assert self._map is not None
        return self.ENTRY.unpack_from(self._map, index * self.ENTRY.size)

    def all_entries(self) -> list[tuple[Any, ...]]:
        if not self._entries or self._map is None:
            return []
        return list(self.ENTRY.iter_unpack(self._map[: self._position]))

    @property
    def last_fields(self) -> tuple[Any, ...] | None:
        """The raw fields of the last entry (cached: the append path reads it every time)."""
        return self._last

    def _refresh_last(self) -> None:
        self._last = self.entry(self._entries - 1) if self._entries else None

    def _append(self, *fields: int) -> None:
        size = self.ENTRY.size
        check(self._position == self._entries * size, "index position must be entries x size")
        check(self._position + size <= self._mapped_bytes, "index file is full")
        if self._position + size > self._reserved_bytes:
            self._reserve(self._position + size)
        self.ENTRY.pack_into(self._map, self._position, *fields)  # type: ignore[arg-type]
        self._entries += 1
        self._position += size
        self._last = fields

    def _reserve(self, end: int) -> None:
        """Allocate disk space for the pages up to ``end`` (OSError, e.g. ENOSPC, if none)."""
        start = self._reserved_bytes
        stop = min(self._mapped_bytes, end - end % _PAGE_BYTES + _PAGE_BYTES)
        os.posix_fallocate(self._fd, start, stop - start)
        self._reserved_bytes = stop

    def _bisect(self, field: int, target: int) -> int:
        """Index of the last entry whose ``field`` is <= target, or -1 (fields must not
        decrease). The lookup hot path: unpacks straight from the map."""
        mapped, unpack, size = self._map, self.ENTRY.unpack_from, self.ENTRY.size
        lo, hi = 0, self._entries
        while lo < hi:
            mid = (lo + hi) // 2
            if unpack(mapped, mid * size)[field] <= target:  # type: ignore[arg-type]
                lo = mid + 1
            else:
                hi = mid
        return lo - 1

    def truncate_entries(self, count: int) -> None:
        """Keep only the first ``count`` entries."""
        check(0 <= count <= self._entries, f"{self.path}: truncate to {count} of {self._entries}")
        self._entries = count
        self._position = count * self.ENTRY.size
        self._refresh_last()

    def reset(self) -> None:
        """Drop every entry (before a rebuild)."""
        self.truncate_entries(0)
        self.size_is_whole_entries = True

    def make_active(self, max_index_bytes: int) -> None:
        """Preallocate to ``max_index_bytes`` (whole entries) so appends need no resize."""
        self._max_entries = max(max_index_bytes // self.ENTRY.size, self._entries)
        self._resize(self._max_entries * self.ENTRY.size)

    def trim(self) -> None:
        """Shrink the file to its entries (the segment stopped taking appends)."""
        self._max_entries = self._entries
        self._resize(self._position)

    def _resize(self, nbytes: int) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        os.ftruncate(self._fd, nbytes)
        self._reserved_bytes = min(self._reserved_bytes, nbytes)
        if nbytes:
            self._map = mmap.mmap(self._fd, nbytes)
        self._mapped_bytes = nbytes

    def flush(self) -> None:
        """Write the mapped pages to disk."""
        if self._map is not None:
            self._map.flush()

    def rename(self, path: Path) -> None:
        os.rename(self.path, path)
        self.path = path

    def close(self) -> None:
        """Trim and close; the object must not be used afterwards."""
        if self._fd < 0:
            return
        self.trim()
        os.close(self._fd)
        self._fd = -1

    def abandon(self) -> None:
        """Close without trimming (the directory failed; recovery rebuilds this index)."""
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close_and_delete(self) -> None:
        self.abandon()
        self.path.unlink(missing_ok=True)
