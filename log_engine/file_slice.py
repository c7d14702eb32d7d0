"""A byte range of an open log file: what a fetch returns instead of bytes.

The broker sends a slice with ``os.sendfile`` when the transport allows it, and
falls back to :meth:`FileSlice.read` (``os.pread``) otherwise. Storage keeps a
segment's file descriptor open until ``file.delete.delay.ms`` after the segment
is deleted, so a slice handed to a slow connection stays readable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileSlice:
    """``size`` bytes of the file open as ``fileno``, starting at ``position``."""

    fileno: int
    position: int
    size: int

    def read(self) -> bytes:
        """Read the slice's bytes (for transports that cannot ``sendfile``)."""
        data = os.pread(self.fileno, self.size, self.position)
        if len(data) != self.size:
            raise OSError(f"short read: wanted {self.size} bytes, got {len(data)}")
        return data
