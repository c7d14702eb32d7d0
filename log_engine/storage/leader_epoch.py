"""The leader epoch cache: which leader epoch started at which offset.

Persisted as ``<partition dir>/leader-epoch-checkpoint`` in Kafka's checkpoint
format (see :mod:`log_engine.storage.checkpoints`), one ``<epoch> <start offset>``
line per epoch. A follower that becomes leader, or one that lost its tail, asks
"where did epoch N end?" (:meth:`LeaderEpochCache.end_offset_for`, the
OffsetsForLeaderEpoch API) to find the offset it must truncate to.

Invariants: epochs strictly increase and so do start offsets, entry by entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

from log_engine.errors import KafkaStorageError
from log_engine.invariants import check
from log_engine.storage.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    read_checkpoint,
    write_checkpoint,
)

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


class LeaderEpochCache:
    """Epoch -> start offset entries of one partition, written through to its checkpoint."""

    def __init__(self, path: Path, log_end_offset: Callable[[], int]) -> None:
        self._path = path
        self._log_end_offset = log_end_offset
        self._lock = threading.RLock()
        self._entries: list[tuple[int, int]] = []
        for epoch, start in read_checkpoint(path, 2):
            try:
                self._entries.append((int(epoch), int(start)))
            except ValueError:
                raise KafkaStorageError(f"{path}: bad entry {epoch} {start}") from None
        if not _ordered(self._entries):
            raise KafkaStorageError(f"{path}: epochs or start offsets do not increase")

    @classmethod
    def in_directory(cls, directory: Path, log_end_offset: Callable[[], int]) -> LeaderEpochCache:
        """The cache persisted in a partition directory."""
        return cls(directory / LEADER_EPOCH_CHECKPOINT, log_end_offset)

    @property
    def entries(self) -> list[tuple[int, int]]:
        """A copy of the ``(epoch, start_offset)`` entries, oldest first."""
        with self._lock:
            return list(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        """The newest epoch, or None before any leader appended."""
        with self._lock:
            return self._entries[-1][0] if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (no-op if already known).

        A newer epoch whose start offset is at or below existing entries' start
        offsets replaces them: those entries described a log that was truncated.
        """
        if epoch < 0:
            return
        with self._lock:
            if self._entries and epoch < self._entries[-1][0]:
                return  # an older leader's batch, e.g. replicated history
            if self._entries and self._entries[-1][0] == epoch:
                return
            kept = [(e, s) for e, s in self._entries if s < start_offset]
            kept.append((epoch, start_offset))
            self._entries = kept
            self._persist()

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """``(largest epoch <= epoch, its end offset)`` as OffsetsForLeaderEpoch answers.

        The end offset is the next epoch's start offset, or the log end offset
        for the latest epoch; ``(-1, -1)`` when ``epoch`` precedes every entry.
        """
        with self._lock:
            if not self._entries:
                return UNDEFINED_EPOCH, UNDEFINED_OFFSET
            if epoch == self._entries[-1][0]:
                return epoch, self._log_end_offset()
            for index in range(len(self._entries) - 1, -1, -1):
                found, _start = self._entries[index]
                if found <= epoch:
                    if index + 1 < len(self._entries):
                        return found, self._entries[index + 1][1]
                    return found, self._log_end_offset()
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop epochs starting at or after ``end_offset`` (the log was truncated there)."""
        with self._lock:
            kept = [(e, s) for e, s in self._entries if s < end_offset]
            if kept != self._entries:
                self._entries = kept
                self._persist()

    def truncate_from_start(self, start_offset: int) -> None:
        """Forget epochs wholly below ``start_offset``; the epoch holding it starts there."""
        with self._lock:
            below = [(e, s) for e, s in self._entries if s <= start_offset]
            above = [(e, s) for e, s in self._entries if s > start_offset]
            kept = ([(below[-1][0], start_offset)] if below else []) + above
            if kept != self._entries:
                self._entries = kept
                self._persist()

    def clear(self) -> None:
        """Forget every epoch (the log was emptied)."""
        with self._lock:
            self._entries = []
            self._persist()

    def _persist(self) -> None:
        self._check()
        write_checkpoint(self._path, self._entries)

    def _check(self) -> None:
        check(_ordered(self._entries), f"leader epochs out of order: {self._entries}")


def _ordered(entries: list[tuple[int, int]]) -> bool:
    return all(e1 < e2 and s1 < s2 for (e1, s1), (e2, s2) in pairwise(entries))
