"""Connection I/O through asyncio streams, for TLS listeners.

The plaintext path reads and writes the raw socket and sends record data with
``os.sendfile``; TLS has to encrypt in user space, so here file slices are read
with ``os.pread`` in 1 MiB pieces and written through the SSL stream.
"""

from __future__ import annotations

import asyncio
import os

from log_engine.file_slice import FileSlice

_PIECE_BYTES = 1024 * 1024


class StreamConnectionMixin:
    """Overrides a :class:`~log_engine.broker.server.Connection`'s I/O primitives."""

    _reader: asyncio.StreamReader
    _writer: asyncio.StreamWriter

    def attach(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    def _close(self) -> None:
        self._writer.close()

    async def _recv_into(self, view: memoryview) -> int:
        data = await self._reader.read(len(view))
        view[: len(data)] = data
        return len(data)

    async def _sendall(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def _sendfile(self, piece: FileSlice) -> None:
        offset, remaining = piece.position, piece.size
        while remaining > 0:
            data = os.pread(piece.fileno, min(remaining, _PIECE_BYTES), offset)
            if not data:
                raise ConnectionError("log file shorter than the slice being sent")
            self._writer.write(data)
            await self._writer.drain()
            offset += len(data)
            remaining -= len(data)
