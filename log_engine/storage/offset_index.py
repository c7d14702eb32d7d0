"""The sparse offset index of one segment (``<base offset>.index``).

File format: a sequence of 8-byte entries, big-endian::

    relativeOffset int32   offset - segment base offset (of a batch's LAST record)
    position       int32   byte position of that batch in the ``.log`` file

One entry is added per ``index.interval.bytes`` appended, so a lookup lands at
most about that many bytes before the wanted batch and reads batch headers from
there. The file is preallocated and trimmed like every index (see
:mod:`log_engine.storage.index_file`).

Invariants: relative offsets and positions strictly increase; every position
lies inside the log file; the entry count is ``file size / 8`` for a trimmed
index.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import ClassVar

from log_engine.errors import CorruptIndexError
from log_engine.invariants import check
from log_engine.storage.index_file import IndexFile

_INT32_MAX = 2**31 - 1


class OffsetIndex(IndexFile):
    """Offset -> file position entries of one segment, sparse and sorted."""

    ENTRY: ClassVar[struct.Struct] = struct.Struct(">ii")

    def __init__(self, path: Path, base_offset: int, max_index_bytes: int, *, active: bool) -> None:
        super().__init__(path, base_offset, max_index_bytes, active=active)

    def append(self, offset: int, position: int) -> None:
        """Add an entry for the batch whose last offset is ``offset`` at ``position``."""
        relative = offset - self.base_offset
        last = self.last_fields
        check(
            0 <= relative <= _INT32_MAX
            and (last is None or (relative > last[0] and position > last[1])),
            "offset index entries must have increasing offsets and positions",
        )
        self._append(relative, position)

    def last_entry(self) -> tuple[int, int]:
        """``(offset, position)`` of the last entry, or ``(base offset, 0)`` when empty."""
        last = self.last_fields
        if last is None:
            return self.base_offset, 0
        return self.base_offset + last[0], last[1]

    def lookup(self, offset: int) -> tuple[int, int]:
        """The entry with the largest offset <= ``offset``, or ``(base offset, 0)``."""
        index = self._bisect(0, offset - self.base_offset)
        if index < 0:
            return self.base_offset, 0
        relative, position = self.entry(index)
        return self.base_offset + relative, position

    def last_entry_before(self, position: int, offset: int) -> tuple[int, int] | None:
        """The last entry whose position is <= ``position`` and offset < ``offset``, if any."""
        by_position = self._bisect(1, position)
        by_offset = self._bisect(0, offset - self.base_offset - 1)
        index = min(by_position, by_offset)
        if index < 0:
            return None
        relative, found = self.entry(index)
        return self.base_offset + relative, found

    def entry_before(self, position: int) -> tuple[int, int] | None:
        """The last entry whose position is < ``position``, if any."""
        index = self._bisect(1, position - 1)
        if index < 0:
            return None
        relative, found = self.entry(index)
        return self.base_offset + relative, found

    def truncate_to(self, offset: int) -> None:
        """Remove entries for offsets >= ``offset``."""
        self.truncate_entries(self._bisect(0, offset - self.base_offset - 1) + 1)

    def truncate_to_position(self, position: int) -> None:
        """Remove entries pointing at or past ``position`` (the log was cut there)."""
        self.truncate_entries(self._bisect(1, position - 1) + 1)

    def sanity_check(self, log_size: int) -> None:
        """Raise CorruptIndexError unless the file is whole entries, sorted and inside the log."""
        if not self.size_is_whole_entries:
            raise CorruptIndexError(f"{self.path}: size is not a multiple of 8")
        last_relative, last_position = -1, -1
        for relative, position in self.all_entries():
            if relative <= last_relative or position <= last_position:
                raise CorruptIndexError(
                    f"{self.path}: entry ({relative}, {position}) after "
                    f"({last_relative}, {last_position}) does not increase"
                )
            last_relative, last_position = relative, position
        if last_position >= log_size:
            raise CorruptIndexError(
                f"{self.path}: position {last_position} is past the log's {log_size} bytes"
            )
