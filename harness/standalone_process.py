"""Run ``sluice standalone`` as a subprocess, as a user runs it, for the e2e tests.

Each worker gets free ports for its embedded broker and REST API, and its own
folder holding ``worker.properties``, the watched ``pipelines/`` folder, the
broker's data, offsets and connector configs.
"""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from harness.broker_process import free_port
from harness.wait import WAIT_S, wait_for

T = TypeVar("T")
START_TIMEOUT_S = 90.0


#: What a REST call raises while the worker is (re)starting: "not yet" to wait_for.
REST_NOT_YET = (httpx.TransportError, KeyError, OSError)


def wait_for_rest(check: Callable[[], T], what: str, timeout_s: float = WAIT_S) -> T:
    """:func:`harness.wait.wait_for`, taking :data:`REST_NOT_YET` errors as "not yet"."""
    return wait_for(check, what, timeout_s, retry_on=REST_NOT_YET)


def rest_client(
    url: str, cacert: Path | None = None, auth: tuple[str, str] | None = None
) -> httpx.Client:
    """An httpx client for a worker's REST API (``cacert``: trust it for https)."""
    verify: Any = ssl.create_default_context(cafile=str(cacert)) if cacert else True
    return httpx.Client(base_url=url, timeout=30, verify=verify, auth=auth)


class StandaloneProcess:
    """One ``sluice standalone`` process with everything under ``root``.

    ``scheme="https"`` serves the REST API over TLS (the caller gives the
    ``listeners.https.ssl.*`` keys); ``cacert`` and ``auth`` are what
    :attr:`http` trusts and logs in with.
    """

    def __init__(
        self,
        root: Path,
        *,
        flush_interval_ms: int = 1000,
        scheme: str = "http",
        cacert: Path | None = None,
        auth: tuple[str, str] | None = None,
        log_level: str = "info",
        **extra: str,
    ) -> None:
        self.root = root
        self.scheme = scheme
        self.log_level = log_level
        self.pipelines = root / "pipelines"
        self.pipelines.mkdir(parents=True, exist_ok=True)
        self.broker_port = free_port()
        self.rest_port = free_port()
        self.worker_properties = root / "worker.properties"
        settings = {
            "listeners": f"{scheme}://127.0.0.1:{self.rest_port}",
            "pipelines.dir": str(self.pipelines),
            "embedded.broker.listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port}",
            "embedded.broker.log.dirs": str(root / "log"),
            "offset.storage.file.filename": str(root / "connect.offsets"),
            "connector.configs.file": str(root / "connectors.json"),
            "offset.flush.interval.ms": str(flush_interval_ms),
            **extra,
        }
        self.worker_properties.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.log_path = root / "worker.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.http = rest_client(self.url, cacert, auth)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.rest_port}"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker_port}"

    def launch(self, *connector_files: Path) -> StandaloneProcess:
        """Start the process without waiting for it to be ready (see :meth:`start`)."""
        command = [sys.executable, "-m", "connect_worker.cli", "--log-level", self.log_level]
        command.append("standalone")
        command += [str(self.worker_properties), *map(str, connector_files)]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd=self.root
            )
        return self

    def start(self, *connector_files: Path) -> StandaloneProcess:
        """Start the process and wait until ``GET /health`` answers 200."""
        self.launch(*connector_files)
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sluice standalone exited early:\n{self.log_text()}")
            try:
                if self.http.get("/health").status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(
            f"the REST API did not answer within {START_TIMEOUT_S}s:\n{self.log_text()}"
        )

    def wait_exit(self, timeout_s: float = 60) -> int | None:
        """Wait for the process to end by itself (a worker that must not start); its
        exit code, or ``None`` if it still runs after ``timeout_s``."""
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """SIGTERM: a clean shutdown; SIGKILL: a crash. Returns the exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        code = self.process.wait(timeout=60)
        self.process = None
        return code

    def close(self) -> None:
        self.stop()
        self.http.close()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    # ---------------------------------------------------------------- REST helpers

    def status(self, name: str) -> dict[str, Any] | None:
        response = self.http.get(f"/connectors/{name}/status")
        return response.json() if response.status_code == 200 else None

    def state(self, name: str) -> str | None:
        status = self.status(name)
        return status["connector"]["state"] if status else None

    def running(self, name: str) -> bool:
        """The connector and all of its (at least one) tasks are RUNNING."""
        status = self.status(name)
        return bool(
            status
            and status["connector"]["state"] == "RUNNING"
            and status["tasks"]
            and all(task["state"] == "RUNNING" for task in status["tasks"])
        )

    def wait_running(self, name: str) -> None:
        wait_for_rest(lambda: self.running(name), f"{name} RUNNING (status: {self.status(name)})")

    def write_pipeline(self, name: str, content: str | bytes) -> Path:
        """Write a pipeline file the way editors do: a temporary file renamed into place."""
        path = self.pipelines / f"{name}.properties"
        temporary = self.pipelines / f".{name}.properties.tmp"
        data = content.encode() if isinstance(content, str) else content
        temporary.write_bytes(data)
        os.replace(temporary, path)
        return path


def properties(**settings: str | int) -> str:
    """``key=value`` lines; underscores in keyword names become dots (``tasks_max``)."""
    return "".join(f"{key.replace('_', '.')}={value}\n" for key, value in settings.items())


def file_source(name: str, path: Path, topic: str, **extra: str | int) -> str:
    return properties(
        name=name,
        connector_class="FileStreamSource",
        file=str(path),
        topic=topic,
        value_converter="org.apache.kafka.connect.storage.StringConverter",
        **extra,
    )


def file_sink(name: str, path: Path, topic: str, **extra: str | int) -> str:
    return properties(
        name=name,
        connector_class="FileStreamSink",
        file=str(path),
        topics=topic,
        value_converter="org.apache.kafka.connect.storage.StringConverter",
        **extra,
    )


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
