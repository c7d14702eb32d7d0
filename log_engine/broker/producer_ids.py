"""Producer ids for InitProducerId, unique across broker restarts.

Ids are handed out from blocks: the end of the current block is written to
``<log.dir>/producer-id-block`` (fsynced) before any id of it is used, so a
restarted broker starts past every id it may have given out. The block end
moves only once its file is saved (a full disk: no id, KAFKA_STORAGE_ERROR).
"""

from __future__ import annotations

from pathlib import Path

from log_engine.errors import KafkaStorageError
from log_engine.storage.checkpoints import write_atomically

BLOCK_SIZE = 1000


class ProducerIdManager:
    """Allocates producer ids; one per idempotent producer session."""

    def __init__(self, log_dir: Path) -> None:
        self._path = log_dir / "producer-id-block"
        start = int(self._path.read_text().strip()) if self._path.exists() else 0
        self._next = start
        self._block_end = start

    def next_id(self) -> int:
        """The next id; raises KafkaStorageError (no id handed out) if its block cannot be saved."""
        if self._next >= self._block_end:
            block_end = self._next + BLOCK_SIZE
            try:
                write_atomically(self._path, f"{block_end}\n")
            except OSError as exc:
                raise KafkaStorageError(f"cannot save the producer id block: {exc}") from exc
            self._block_end = block_end
        producer_id = self._next
        self._next += 1
        return producer_id
