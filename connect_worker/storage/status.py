"""Connector and task statuses: the last state each reported, with its trace.

The worker reports state changes (through the herder); REST reads them back.
Standalone mode keeps them in memory: after a restart every connector reports
afresh. A log-backed store (the ``connect-status`` topic) comes with
distributed mode.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from connect_worker.states import State


@dataclass(frozen=True, slots=True)
class StateRecord:
    """One reported state; ``trace`` is the failure's traceback, kept while relevant."""

    state: State
    worker_id: str
    trace: str | None = None


class StatusStore(Protocol):
    """Latest state per connector and per task; thread-safe."""

    def put_connector(self, name: str, record: StateRecord) -> None: ...

    def put_task(self, name: str, task_id: int, record: StateRecord) -> None: ...

    def connector(self, name: str) -> StateRecord | None: ...

    def tasks(self, name: str) -> dict[int, StateRecord]: ...

    def remove_task(self, name: str, task_id: int) -> None: ...

    def remove_connector(self, name: str) -> None:
        """Forget the connector and all its tasks."""
        ...


class MemoryStatusStore:
    """Statuses in dicts under one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, StateRecord] = {}
        self._tasks: dict[str, dict[int, StateRecord]] = {}

    def put_connector(self, name: str, record: StateRecord) -> None:
        with self._lock:
            self._connectors[name] = record

    def put_task(self, name: str, task_id: int, record: StateRecord) -> None:
        with self._lock:
            self._tasks.setdefault(name, {})[task_id] = record

    def connector(self, name: str) -> StateRecord | None:
        with self._lock:
            return self._connectors.get(name)

    def tasks(self, name: str) -> dict[int, StateRecord]:
        with self._lock:
            return dict(self._tasks.get(name, {}))

    def remove_task(self, name: str, task_id: int) -> None:
        with self._lock:
            self._tasks.get(name, {}).pop(task_id, None)

    def remove_connector(self, name: str) -> None:
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.pop(name, None)
