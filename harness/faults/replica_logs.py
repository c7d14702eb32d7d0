"""Each node's copy of a partition, read from its log dir with the storage layer.

Run after the node's process has stopped: the log is opened read-mostly (as a
restarting broker opens it, recovery included) and every record's offset and
value are returned, plus the high watermark the node saved at shutdown
(``replication-offset-checkpoint``).
"""

from __future__ import annotations

from pathlib import Path

from log_engine.broker.replica.hw_checkpoint import HighWatermarkCheckpoint
from log_engine.records import decode_batch, iter_batches
from log_engine.storage.config import LogConfig
from log_engine.storage.partition_log import PartitionLog

_READ_BYTES = 1 << 20


def read_partition(log_dir: Path, topic: str, partition: int) -> list[tuple[int, bytes]]:
    """``(offset, value)`` of every record in ``log_dir``'s copy of the partition."""
    directory = log_dir / f"{topic}-{partition}"
    if not directory.exists():
        return []
    log = PartitionLog.open(directory, LogConfig.from_properties({}))
    try:
        out: list[tuple[int, bytes]] = []
        offset = log.log_start_offset
        while offset < log.log_end_offset:
            result = log.read(offset, _READ_BYTES)
            data = result.read_bytes()
            if not data:
                break
            for position, _ in iter_batches(data):
                _, records = decode_batch(data, position)
                out.extend((r.offset, bytes(r.value or b"")) for r in records if r.offset >= offset)
            offset = result.next_offset
        return out
    finally:
        log.close()


def saved_high_watermark(log_dir: Path, topic: str, partition: int) -> int | None:
    """The high watermark ``log_dir``'s broker saved for the partition, if any."""
    return HighWatermarkCheckpoint(log_dir).read().get((topic, partition))
