"""The time index of one segment (``<base offset>.timeindex``).

File format: a sequence of 12-byte entries, big-endian::

    timestamp      int64   the largest batch max timestamp seen so far in the segment
    relativeOffset int32   last offset of the batch that first reached it, minus base

An entry is added next to each offset index entry, but only when the largest
timestamp grew. When the segment stops being active one final entry records
its largest timestamp, so a reopened segment knows it without scanning; one
slot is kept free for that entry (:attr:`TimeIndex.is_full` counts it).

Invariants: timestamps strictly increase, relative offsets never decrease.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import ClassVar

from log_engine.errors import CorruptIndexError
from log_engine.invariants import check
from log_engine.storage.index_file import IndexFile

NO_TIMESTAMP = -1
_INT32_MAX = 2**31 - 1


class TimeIndex(IndexFile):
    """Timestamp -> offset entries of one segment: where to start a search by time."""

    ENTRY: ClassVar[struct.Struct] = struct.Struct(">qi")

    def __init__(self, path: Path, base_offset: int, max_index_bytes: int, *, active: bool) -> None:
        super().__init__(path, base_offset, max_index_bytes, active=active)

    @property
    def is_full(self) -> bool:
        """Full for ordinary appends: the last slot is reserved for the final entry."""
        return self.entries >= self.max_entries - 1

    def maybe_append(self, timestamp: int, offset: int, *, final: bool = False) -> None:
        """Add ``(timestamp, offset)`` if the timestamp is newer than the last entry's.

        ``final`` may use the reserved last slot; without room nothing is added
        (the index stays correct, only sparser).
        """
        if timestamp <= self.last_entry()[0]:
            return
        if self.entries >= (self.max_entries if final else self.max_entries - 1):
            return
        relative = offset - self.base_offset
        last = self.last_fields
        check(
            0 <= relative <= _INT32_MAX and (last is None or relative >= last[1]),
            "time index offsets must not decrease",
        )
        self._append(timestamp, relative)

    def last_entry(self) -> tuple[int, int]:
        """``(timestamp, offset)`` of the last entry, or ``(-1, base offset)`` when empty."""
        last = self.last_fields
        if last is None:
            return NO_TIMESTAMP, self.base_offset
        return last[0], self.base_offset + last[1]

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """The entry with the largest timestamp <= ``timestamp``, or ``(-1, base offset)``."""
        index = self._bisect(0, timestamp)
        if index < 0:
            return NO_TIMESTAMP, self.base_offset
        found, relative = self.entry(index)
        return found, self.base_offset + relative

    def truncate_to(self, offset: int) -> None:
        """Remove entries whose offset is >= ``offset``."""
        self.truncate_entries(self._bisect(1, offset - self.base_offset - 1) + 1)

    def sanity_check(self) -> None:
        """Raise CorruptIndexError unless whole entries with increasing timestamps and offsets."""
        if not self.size_is_whole_entries:
            raise CorruptIndexError(f"{self.path}: size is not a multiple of 12")
        last_timestamp, last_relative = NO_TIMESTAMP, 0
        for timestamp, relative in self.all_entries():
            if timestamp <= last_timestamp or relative < last_relative:
                raise CorruptIndexError(
                    f"{self.path}: entry ({timestamp}, {relative}) after "
                    f"({last_timestamp}, {last_relative}) goes backwards"
                )
            last_timestamp, last_relative = timestamp, relative
