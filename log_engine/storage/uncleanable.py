"""Compacted partitions the cleaner failed on, and when to try each again.

Compaction is the one place storage decodes records, so it is where bytes
that pass every batch-level check (a CRC-valid batch with garbage records)
blow up, with any exception (IndexError, struct.error, ...). As Kafka's
LogCleaner marks such a partition *uncleanable*, :class:`UncleanablePartitions`
takes it out of compaction and lets retention, flushes, checkpoints and the
other partitions carry on. The failure is logged once with its trace; the
partition is retried after a backoff that doubles up to a cap, and a pass
that succeeds clears the mark.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

INITIAL_BACKOFF_MS = 60_000
MAX_BACKOFF_MS = 3_600_000

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Uncleanable:
    """Why and until when a partition is left out of compaction."""

    error: str
    failures: int
    retry_at_ms: int


class UncleanablePartitions:
    """The partitions the cleaner skips until their backoff ends."""

    def __init__(
        self, initial_backoff_ms: int = INITIAL_BACKOFF_MS, max_backoff_ms: int = MAX_BACKOFF_MS
    ) -> None:
        self._initial_backoff_ms = initial_backoff_ms
        self._max_backoff_ms = max_backoff_ms
        self._lock = threading.Lock()
        self._marked: dict[TopicPartition, Uncleanable] = {}

    def due(self, tp: TopicPartition, now_ms: int) -> bool:
        """Whether ``tp`` may be compacted now (not marked, or its backoff is over)."""
        with self._lock:
            entry = self._marked.get(tp)
        return entry is None or now_ms >= entry.retry_at_ms

    def failed(self, tp: TopicPartition, now_ms: int, exc: BaseException) -> None:
        """Mark ``tp`` uncleanable after ``exc``; the first failure is logged with its trace."""
        with self._lock:
            previous = self._marked.get(tp)
            failures = 1 if previous is None else previous.failures + 1
            backoff_ms = min(self._initial_backoff_ms << (failures - 1), self._max_backoff_ms)
            entry = Uncleanable(f"{type(exc).__name__}: {exc}", failures, now_ms + backoff_ms)
            self._marked[tp] = entry
        if previous is None:
            log.error(
                "compaction of %s-%d failed; the partition is marked uncleanable (retry in "
                "%d ms, backing off up to %d ms) and the rest of log maintenance carries on",
                *tp,
                backoff_ms,
                self._max_backoff_ms,
                exc_info=exc,
            )
        else:
            log.debug("compaction of %s-%d failed again (%s)", *tp, entry.error)

    def succeeded(self, tp: TopicPartition) -> None:
        """Clear ``tp``'s mark after a compaction pass that did not fail."""
        with self._lock:
            entry = self._marked.pop(tp, None)
        if entry is not None:
            log.info("%s-%d is cleanable again after %d failure(s)", *tp, entry.failures)

    def forget(self, tp: TopicPartition) -> None:
        """Drop ``tp`` (its partition was deleted)."""
        with self._lock:
            self._marked.pop(tp, None)

    def snapshot(self) -> dict[TopicPartition, Uncleanable]:
        """The marked partitions now."""
        with self._lock:
            return dict(self._marked)
