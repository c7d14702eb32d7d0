"""Run ``sluice broker`` in its own process for tests, as a user would."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

_START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BrokerProcess:
    """A broker subprocess on a loopback port (``port``, else a free one), data in ``data_dir``."""

    def __init__(self, data_dir: Path, *, port: int | None = None, **overrides: str) -> None:
        self.data_dir = data_dir
        self.port = port if port is not None else free_port()
        self.overrides = {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(data_dir),
            "group.initial.rebalance.delay.ms": "0",
            "offsets.topic.num.partitions": "3",
            **overrides,
        }
        self.log_path = data_dir.parent / f"{data_dir.name}-broker.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> BrokerProcess:
        args = [sys.executable, "-m", "connect_worker.cli", "broker"]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child's lifetime
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"broker exited early:\n{self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"broker did not listen within {_START_TIMEOUT_S}s:\n{self.log_text()}")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Stop the broker (SIGTERM: clean shutdown; SIGKILL: crash) and return its exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        code = self.process.wait(timeout=30)
        self.process = None
        return code

    def restart(self) -> BrokerProcess:
        self.stop()
        return self.start()

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
