"""Which WAL position may be confirmed to PostgreSQL, given what the log acknowledged.

Every streamed record has a position ``(lsn_commit, seq)`` (its transaction's
commit LSN, its index in that transaction's records), increasing in stream
order. When a transaction's Commit message is read, :meth:`Confirmations.completed`
notes "once the record at position P is acknowledged, the slot may move to
this transaction's end LSN", where P is the last record emitted so far. The
task calls :meth:`Confirmations.acknowledged` for each acknowledged record
(``commit_record``, in order) and :meth:`Confirmations.confirmable` in
``commit()``, after the runtime made those records' offsets durable: the LSN
returned is never past a change that is not safely in the log.
"""

from __future__ import annotations

from collections import deque

Position = tuple[int, int]
START: Position = (0, -1)


class Confirmations:
    """Completed transactions waiting for their last record's acknowledgement."""

    def __init__(self, acked: Position = START) -> None:
        self._waiting: deque[tuple[Position, int]] = deque()
        self.emitted: Position = acked
        self.acked: Position = acked
        self.committed: Position = acked  # acked as of the last confirmable() call

    def emit(self, position: Position) -> None:
        self.emitted = position

    def completed(self, end_lsn: int) -> None:
        """A transaction (or a heartbeat point) ended at ``end_lsn`` after all emitted records."""
        key = self.emitted
        if self._waiting and self._waiting[-1][0] == key:
            self._waiting[-1] = (key, end_lsn)  # nothing emitted since: just move the end on
        else:
            self._waiting.append((key, end_lsn))

    def acknowledged(self, position: Position) -> None:
        if position > self.acked:
            self.acked = position

    def confirmable(self) -> int | None:
        """The end LSN of the last completed transaction fully acknowledged, if any new."""
        acked = self.acked
        self.committed = acked
        lsn = None
        waiting = self._waiting
        while waiting and waiting[0][0] <= acked:
            lsn = waiting.popleft()[1]
        return lsn

    def drain_if_idle(self) -> bool:
        """True (forgetting what waits) when every emitted record was acknowledged and
        committed as of the last :meth:`confirmable`: nothing in flight, so any later
        position may be confirmed."""
        committed = self.committed
        if self.emitted > committed or any(key > committed for key, _ in self._waiting):
            return False
        self._waiting.clear()
        return True

    def __len__(self) -> int:
        return len(self._waiting)
