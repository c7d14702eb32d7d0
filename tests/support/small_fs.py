"""A real, small file system for full-disk tests: a tmpfs mounted for one test.

Tests run as root (``make test`` in CI and here), so ``mount -t tmpfs`` works;
when it does not, the fixture FAILS with the reason (a skipped full-disk test
would hide exactly the failures it exists to catch). ``fill()`` takes every
free byte with a filler file beside the data; ``free()`` gives bytes back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

_FILLER = "filler"
_CHUNKS = (1 << 20, 1 << 16, 4096, 512, 64, 1)


class SmallFilesystem:
    """A tmpfs of ``size_bytes`` at ``mount_point``; use as a context manager."""

    def __init__(self, mount_point: Path, size_bytes: int) -> None:
        self.root = mount_point
        self.size_bytes = size_bytes
        self.filler = mount_point / _FILLER
        self._mounted = False

    def __enter__(self) -> SmallFilesystem:
        self.mount()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.unmount()

    def mount(self) -> None:
        """Mount; RuntimeError with mount's own message if that is impossible here."""
        self.root.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size_bytes},mode=0755", "tmpfs", self.root],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"cannot mount a {self.size_bytes}-byte tmpfs at {self.root} (full-disk tests "
                f"need root or CAP_SYS_ADMIN): {done.stderr.strip() or done.returncode}"
            )
        self._mounted = True

    def unmount(self) -> None:
        if not self._mounted:
            return
        done = subprocess.run(["umount", self.root], capture_output=True, check=False)
        if done.returncode != 0:  # a process still holds a file: detach it now, gone at exit
            subprocess.run(["umount", "-l", self.root], capture_output=True, check=False)
        self._mounted = False

    def free_bytes(self) -> int:
        stats = os.statvfs(self.root)
        return stats.f_bavail * stats.f_frsize

    def fill(self) -> int:
        """Write the filler until not one more byte fits; return the filler's size."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for chunk in _CHUNKS:
                data = b"\0" * chunk
                while True:
                    try:
                        if os.write(fd, data) < chunk:
                            break
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def free(self, nbytes: int | None = None) -> None:
        """Give back ``nbytes`` of the filler (all of it when None)."""
        if nbytes is None:
            with contextlib.suppress(FileNotFoundError):
                self.filler.unlink()
            return
        size = self.filler.stat().st_size
        os.truncate(self.filler, max(0, size - nbytes))


@contextlib.contextmanager
def mounted_or_fail(mount_point: Path, size_bytes: int) -> Iterator[SmallFilesystem]:
    """A mounted SmallFilesystem for a fixture; ``pytest.fail`` (never skip) if impossible."""
    fs = SmallFilesystem(mount_point, size_bytes)
    try:
        fs.mount()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield fs
    finally:
        fs.unmount()
