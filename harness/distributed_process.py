"""Run ``sluice distributed`` workers as subprocesses, as a user runs them.

Each worker gets a free REST port and its own folder (``worker.properties``,
``pipelines/``, its log); workers made with the same ``group_id`` and
``bootstrap`` form one Connect cluster.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.broker_process import free_port
from harness.standalone_process import StandaloneProcess, rest_client


class DistributedProcess(StandaloneProcess):
    """One ``sluice distributed`` process; the REST helpers are the standalone ones."""

    def __init__(
        self,
        root: Path,
        *,
        bootstrap: str,
        group_id: str,
        scheme: str = "http",
        cacert: Path | None = None,
        auth: tuple[str, str] | None = None,
        **extra: str,
    ) -> None:
        self.root = root
        self.scheme = scheme
        self.pipelines = root / "pipelines"
        self.pipelines.mkdir(parents=True, exist_ok=True)
        self.rest_port = free_port()
        self.broker_port = 0
        self._bootstrap = bootstrap
        self.worker_properties = root / "worker.properties"
        settings = {
            "bootstrap.servers": bootstrap,
            "group.id": group_id,
            "listeners": f"{scheme}://127.0.0.1:{self.rest_port}",
            "pipelines.dir": str(self.pipelines),
            "config.storage.topic": f"{group_id}-configs",
            "offset.storage.topic": f"{group_id}-offsets",
            "status.storage.topic": f"{group_id}-status",
            "offset.storage.partitions": "3",
            "status.storage.partitions": "2",
            "offset.flush.interval.ms": "500",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            **extra,
        }
        self.worker_properties.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.log_path = root / "worker.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.http = rest_client(self.url, cacert, auth)

    @property
    def bootstrap(self) -> str:
        return self._bootstrap

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.rest_port}"

    def launch(self, *connector_files: Path) -> DistributedProcess:
        command = [sys.executable, "-m", "connect_worker.cli", "distributed"]
        command.append(str(self.worker_properties))
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd=self.root
            )
        return self

    def task_owners(self, name: str) -> list[str]:
        """Each task's worker_id as the status shows it."""
        status: dict[str, Any] | None = self.status(name)
        return [t["worker_id"] for t in status["tasks"]] if status else []


def put_config(worker: DistributedProcess, name: str, config: dict[str, str]) -> dict[str, Any]:
    """``PUT /connectors/{name}/config``, again while the group answers 409 (rebalancing)."""
    from harness.standalone_process import wait_for_rest

    def attempt() -> dict[str, Any]:
        response = worker.http.put(f"/connectors/{name}/config", json=config)
        if response.status_code == 409:
            return {}  # falsy: not yet
        assert response.status_code in (200, 201), response.text
        body: dict[str, Any] = response.json()
        return body

    return wait_for_rest(attempt, f"PUT /connectors/{name}/config accepted")


def config_of(text: str) -> dict[str, str]:
    """``key=value`` lines as a dict (the REST body of a pipeline file)."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
