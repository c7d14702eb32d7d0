"""Producer ids for InitProducerId, unique across broker restarts.

Ids are handed out from blocks: the end of the current block is written to
``<log.dir>/producer-id-block`` (fsynced) before any id of it is used, so a
restarted broker starts past every id it may have given out.
"""

from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 1000


class ProducerIdManager:
    """Allocates producer ids; one per idempotent producer session."""

    def __init__(self, log_dir: Path) -> None:
        self._path = log_dir / "producer-id-block"
        start = int(self._path.read_text().strip()) if self._path.exists() else 0
        self._next = start
        self._block_end = start

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._block_end = self._next + BLOCK_SIZE
            tmp = self._path.with_suffix(".tmp")
            with open(tmp, "w") as out:
                out.write(f"{self._block_end}\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self._path)
        producer_id = self._next
        self._next += 1
        return producer_id
