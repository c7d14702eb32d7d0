"""The in-memory view of the replicated log: entries, log start, epoch lookups.

The log holds entries ``[start_offset, end_offset)``, contiguous, with non-decreasing
epochs. Everything below ``start_offset`` is covered by the latest snapshot, whose
epoch (``start_epoch``) answers lookups at ``start_offset - 1``. The log is a pure
data structure; making it durable is the storage's job (see ``actions.py``).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from log_engine.invariants import check
from log_engine.replication.raft.types import Entry, OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class FetchValidation:
    """How a leader answers a follower's (fetch offset, last fetched epoch).

    Exactly one of: ``valid``; ``diverging`` (truncate to it); ``snapshot_id`` (fetch it).
    """

    valid: bool
    diverging: OffsetAndEpoch | None = None
    snapshot_id: OffsetAndEpoch | None = None


class RaftLog:
    """An ordered list of :class:`Entry` above a snapshot, with Raft's epoch queries."""

    def __init__(self, start: OffsetAndEpoch | None = None, entries: list[Entry] | None = None):
        start = start or OffsetAndEpoch(0, 0)
        self._start = start
        self._entries: list[Entry] = []
        # Epoch boundaries: parallel lists of (epoch, first offset of that epoch).
        self._epochs: list[int] = []
        self._epoch_starts: list[int] = []
        for entry in entries or []:
            self.append(entry)

    @property
    def start_offset(self) -> int:
        """The first offset still in the log (the latest snapshot's end offset)."""
        return self._start.offset

    @property
    def start_epoch(self) -> int:
        """The epoch of the entry just below ``start_offset`` (0 for an empty history)."""
        return self._start.epoch

    @property
    def end_offset(self) -> int:
        """The offset the next appended entry gets."""
        return self._start.offset + len(self._entries)

    @property
    def last_epoch(self) -> int:
        """The epoch of the last entry (or of the snapshot when the log is empty)."""
        return self._entries[-1].epoch if self._entries else self._start.epoch

    def end_offset_and_epoch(self) -> OffsetAndEpoch:
        """The log's end offset with the epoch of its last entry."""
        return OffsetAndEpoch(self.end_offset, self.last_epoch)

    def entry(self, offset: int) -> Entry:
        """The entry at ``offset`` (which must be in ``[start_offset, end_offset)``)."""
        check(self.start_offset <= offset < self.end_offset, f"offset {offset} not in log")
        return self._entries[offset - self.start_offset]

    def entries(self, start: int, end: int) -> list[Entry]:
        """Entries in ``[start, end)``, clipped to the log."""
        low = max(start, self.start_offset) - self.start_offset
        high = min(end, self.end_offset) - self.start_offset
        return self._entries[low:high] if high > low else []

    def read(self, start: int, max_entries: int, max_bytes: int) -> list[Entry]:
        """Entries from ``start``: at most ``max_entries``, and ``max_bytes`` of payload
        unless the first entry alone is larger (so a fetch always makes progress)."""
        found: list[Entry] = []
        size = 0
        for entry in self.entries(start, start + max_entries):
            size += len(entry.payload)
            if found and size > max_bytes:
                break
            found.append(entry)
        return found

    def epoch_at(self, offset: int) -> int | None:
        """The epoch of the entry at ``offset``; ``start_offset - 1`` answers the snapshot's."""
        if offset == self.start_offset - 1:
            return self.start_epoch
        if offset == -1:
            return 0
        if self.start_offset <= offset < self.end_offset:
            return self._entries[offset - self.start_offset].epoch
        return None

    def append(self, entry: Entry) -> None:
        """Append one entry at the end; its epoch must not go below the last epoch."""
        check(entry.offset == self.end_offset, f"append at {entry.offset} != end {self.end_offset}")
        check(entry.epoch >= self.last_epoch, f"epoch {entry.epoch} < last {self.last_epoch}")
        if not self._epochs or self._epochs[-1] != entry.epoch:
            self._epochs.append(entry.epoch)
            self._epoch_starts.append(entry.offset)
        self._entries.append(entry)

    def truncate_from(self, offset: int) -> None:
        """Drop every entry at ``offset`` and above."""
        check(offset >= self.start_offset, f"truncate {offset} below log start {self.start_offset}")
        if offset >= self.end_offset:
            return
        del self._entries[offset - self.start_offset :]
        while self._epoch_starts and self._epoch_starts[-1] >= offset:
            self._epochs.pop()
            self._epoch_starts.pop()

    def delete_before(self, start: OffsetAndEpoch) -> None:
        """Make ``start`` the log start (a snapshot now covers what lies below it).

        Entries at or above ``start.offset`` are kept if the log reaches that far and
        agrees with the snapshot's epoch; otherwise the log is emptied.
        """
        keep = self.entries(start.offset, self.end_offset)
        if self.epoch_at(start.offset - 1) != start.epoch:
            keep = []
        self._start = start
        self._entries = []
        self._epochs, self._epoch_starts = [], []
        for entry in keep:
            self.append(entry)

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """The end offset of the largest local epoch not above ``epoch``, and that epoch.

        This is Kafka's OffsetForLeaderEpoch answer: where a log written up to
        ``epoch`` by a leader agrees with this one at most.
        """
        index = bisect_right(self._epochs, epoch) - 1
        if index < 0:
            return OffsetAndEpoch(self.start_offset, self.start_epoch)
        found = self._epochs[index]
        if index + 1 < len(self._epochs):
            return OffsetAndEpoch(self._epoch_starts[index + 1], found)
        return OffsetAndEpoch(self.end_offset, found)

    def validate_fetch(self, fetch_offset: int, last_fetched_epoch: int) -> FetchValidation:
        """Check a follower's position against this (the leader's) log, as KIP-595 does."""
        if fetch_offset == 0 and self.start_offset == 0:
            return FetchValidation(valid=True)
        if self.start_offset > 0 and (
            fetch_offset < self.start_offset
            or (fetch_offset == self.start_offset and last_fetched_epoch != self.start_epoch)
            or last_fetched_epoch < self.start_epoch
        ):
            return FetchValidation(valid=False, snapshot_id=self._start)
        found = self.end_offset_for_epoch(last_fetched_epoch)
        if found.epoch != last_fetched_epoch or found.offset < fetch_offset:
            return FetchValidation(valid=False, diverging=found)
        return FetchValidation(valid=True)

    def truncation_offset_for(self, diverging: OffsetAndEpoch) -> int:
        """Where a follower truncates when the leader reports ``diverging``."""
        local = self.end_offset_for_epoch(diverging.epoch)
        if local.epoch == diverging.epoch:
            return min(local.offset, diverging.offset)
        return local.offset
