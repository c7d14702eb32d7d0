"""Run ``sluice broker`` in its own process for tests, as a user would."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

_START_TIMEOUT_S = 30.0


#: Ports handed out by :func:`free_port` are taken below the kernel's ephemeral range
#: (32768 and up on Linux), so no outgoing connection can be given one before its
#: server binds it; each pytest-xdist worker draws from a band of its own, and no
#: port is handed out twice in a process.
_PORT_LOW, _PORT_HIGH = 10_000, 32_000
_handed_out: set[int] = set()
_ports = random.Random()


def _band() -> tuple[int, int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ... under xdist
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return _PORT_LOW, _PORT_HIGH
    width = (_PORT_HIGH - _PORT_LOW) // count
    low = _PORT_LOW + int(worker[2:]) % count * width
    return low, low + width


def free_port() -> int:
    """A loopback port nothing listens on, not handed out before by this process."""
    low, high = _band()
    for _ in range(1000):
        port = _ports.randrange(low, high)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port in {low}-{high} after 1000 tries")


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
