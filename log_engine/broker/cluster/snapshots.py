"""``MetadataSnapshotter``: writes a metadata snapshot when the listener says one is due.

After each commit the listener counts the record bytes applied since its last
snapshot; past ``metadata.log.max.record.bytes.between.snapshots`` the image is
written with ``quorum.create_snapshot`` (the quorum cuts its log below it, and
lagging voters and observers fetch it). The listener calls back inside the
quorum's step, so the snapshot is taken in a task of its own, one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.replication.quorum import ControllerQuorum
from log_engine.replication.raft import RaftError

log = logging.getLogger(__name__)


class MetadataSnapshotter:
    """Snapshots the metadata image every ``max_bytes`` of committed records."""

    def __init__(self, quorum: ControllerQuorum, listener: MetadataListener, max_bytes: int):
        self._quorum = quorum
        self._listener = listener
        self._max_bytes = max_bytes
        self._task: asyncio.Task[None] | None = None

    def attach(self) -> None:
        self._listener.subscribe(self._on_update)

    def _on_update(self, update: MetadataUpdate) -> None:
        if self._task is None and self._listener.snapshot_due(self._max_bytes):
            end_offset, payload = self._listener.snapshot()
            self._task = asyncio.get_running_loop().create_task(self._write(end_offset, payload))

    async def _write(self, end_offset: int, payload: bytes) -> None:
        try:
            await self._quorum.create_snapshot(end_offset, payload)
            log.info("metadata snapshot at offset %d (%d bytes)", end_offset, len(payload))
        except RaftError as exc:
            log.warning("metadata snapshot at offset %d failed: %s", end_offset, exc)
        finally:
            self._task = None

    async def stop(self) -> None:
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
