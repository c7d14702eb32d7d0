"""The storage layer's small result types, shared by the log and its segments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from log_engine.file_slice import FileSlice


class BatchInfo(NamedTuple):
    """Where one batch sits (in an append buffer or a segment file) and what it covers."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int


@dataclass(frozen=True, slots=True)
class AppendInfo:
    """What one ``PartitionLog.append`` stored.

    ``first_offset``/``last_offset`` are -1 for an empty append;
    ``log_append_time_ms`` is -1 unless the topic uses LogAppendTime.
    """

    first_offset: int
    last_offset: int
    max_timestamp: int
    log_append_time_ms: int
    size_bytes: int
    batch_count: int


@dataclass(frozen=True, slots=True)
class ReadResult:
    """Whole stored batches as file slices, one slice per segment touched.

    ``first_batch_offset`` is the base offset of the first batch (it may be
    below the offset asked for: batches are never split), -1 when empty;
    ``next_offset`` is the offset after the last batch returned.
    """

    slices: list[FileSlice] = field(default_factory=list)
    size_bytes: int = 0
    first_batch_offset: int = -1
    next_offset: int = -1

    def read_bytes(self) -> bytes:
        """The batches' bytes, concatenated (for transports without sendfile)."""
        if len(self.slices) == 1:
            return self.slices[0].read()
        return b"".join(s.read() for s in self.slices)
