"""A WorkerGroupMember in a process of its own, to be killed or paused for real.

``python -m tests.support.connect_member_process SETTINGS_JSON URL TASK_COUNTS_JSON``
joins the group and prints one JSON line per listener call on stdout:
``{"event": "assigned"|"revoked"|"lost", "connectors": [...], "tasks": [[c, n], ...],
"generation": n, "member_id": ...}``. It runs until killed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

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


def main() -> None:
    settings = GroupSettings.from_mapping(json.loads(sys.argv[1]))
    asyncio.run(_run(settings, sys.argv[2], json.loads(sys.argv[3])))


if __name__ == "__main__":
    main()
