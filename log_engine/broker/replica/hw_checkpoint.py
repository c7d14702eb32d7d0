"""``replication-offset-checkpoint``: the high watermarks of replicated partitions.

Kafka's file of that name at the log dir root, in the checkpoint format of
:mod:`log_engine.storage.checkpoints` (``<topic> <partition> <offset>``
lines). Written every ``replica.high.watermark.checkpoint.interval.ms`` and at
shutdown, in a worker thread (each write fsyncs); read once at start, so a
restarted broker's partitions start from the high watermark they had instead
of 0: consumers and ListOffsets keep seeing what was committed before the
restart while the ISR has not fetched yet. A high watermark is never ahead of
what was replicated to the whole ISR, so restoring an older one is safe.
"""

from __future__ import annotations

import threading
from pathlib import Path

from log_engine.storage.checkpoints import TopicPartition, read_offsets, write_offsets

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"


class HighWatermarkCheckpoint:
    """The checkpoint file of one log dir."""

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / REPLICATION_OFFSET_CHECKPOINT
        self._written: dict[TopicPartition, int] = {}
        self._lock = threading.Lock()  # a timed write in a thread may meet the one at stop

    def read(self) -> dict[TopicPartition, int]:
        """The saved high watermarks (empty without a file)."""
        self._written = read_offsets(self.path)
        return dict(self._written)

    def write(self, offsets: dict[TopicPartition, int]) -> None:
        """Save ``offsets`` (skipped when nothing changed since the last write)."""
        with self._lock:
            if offsets != self._written:
                write_offsets(self.path, offsets)
                self._written = dict(offsets)
