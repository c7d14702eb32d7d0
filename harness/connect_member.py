"""A Connect WorkerGroupMember in a process of its own, to be killed or paused for real.

``python -m harness.connect_member SETTINGS_JSON URL TASK_COUNTS_JSON`` joins
the group and prints one JSON line per listener call on stdout:
``{"event": "assigned"|"revoked"|"lost", "connectors": [...], "tasks": [[c, n], ...],
"generation": n, "member_id": ...}``. It runs until killed.
:class:`MemberProcess` starts one and follows what it runs from those lines.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from connect_worker.distributed.assignor import Work
from connect_worker.distributed.membership import ConfigState, GroupSettings, WorkerGroupMember
from connect_worker.distributed.protocol import ConnectAssignment
from connect_worker.runtime.status import TaskId


class _Printer:
    def __init__(self) -> None:
        self.member: WorkerGroupMember | None = None

    def _emit(self, event: str, connectors: Any, tasks: Any, **extra: Any) -> None:
        line = {
            "event": event,
            "connectors": sorted(connectors),
            "tasks": sorted([t.connector, t.task] for t in tasks),
            "member_id": self.member.member_id if self.member else "",
            **extra,
        }
        print(json.dumps(line), flush=True)

    async def on_assigned(self, assignment: ConnectAssignment, generation: int) -> None:
        self._emit("assigned", assignment.connectors, assignment.tasks, generation=generation)

    async def on_revoked(
        self, leader: str, connectors: tuple[str, ...], tasks: tuple[TaskId, ...]
    ) -> None:
        self._emit("revoked", connectors, tasks)

    async def on_lost(
        self, connectors: tuple[str, ...], tasks: tuple[TaskId, ...], reason: str
    ) -> None:
        self._emit("lost", connectors, tasks, reason=reason)


async def _run(settings: GroupSettings, url: str, task_counts: dict[str, int]) -> None:
    printer = _Printer()
    member = WorkerGroupMember(
        settings,
        rest_url=url,
        config_state=lambda: ConfigState(1, task_counts),
        listener=printer,
    )
    printer.member = member
    while True:
        await member.poll(1000)


class MemberProcess:
    """A member process; ``running`` follows its stdout (a reader thread)."""

    def __init__(
        self,
        settings: Mapping[str, str],
        url: str,
        task_counts: Mapping[str, int],
        log_path: Path,
    ) -> None:
        args = [
            sys.executable, "-m", "harness.connect_member",
            json.dumps(dict(settings)), url, json.dumps(dict(task_counts)),
        ]  # fmt: skip
        repo = Path(__file__).resolve().parents[1]
        self._log: BinaryIO = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(args, cwd=repo, stdout=subprocess.PIPE, stderr=self._log)
        self._running = Work()
        self._events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            event = json.loads(line)
            work = Work.of(event["connectors"], (TaskId(c, n) for c, n in event["tasks"]))
            with self._lock:
                self._events.append(event)
                if event["event"] == "assigned":
                    self._running = work
                elif event["event"] == "revoked":
                    self._running -= work
                else:
                    self._running = Work()

    def snapshot(self) -> tuple[Work, list[dict[str, Any]]]:
        """What it runs now, and every event so far."""
        with self._lock:
            return self._running, list(self._events)

    def stop(self) -> None:
        """Kill it (SIGKILL) if still running and release its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self._reader.join(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()


def main() -> None:
    settings = GroupSettings.from_mapping(json.loads(sys.argv[1]))
    asyncio.run(_run(settings, sys.argv[2], json.loads(sys.argv[3])))


if __name__ == "__main__":
    main()
