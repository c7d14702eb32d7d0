"""Connector and task statuses: the last state each reported, with its trace,
and each connector's active topics (KIP-558).

The worker reports state changes (through the herder); REST reads them back.
States are kept in memory: after a restart every connector reports afresh.
Active topics are history, not state: Kafka Connect keeps them in its status
topic and they outlive the worker, so the standalone worker's
:class:`FileStatusStore` writes them to a file (``status.storage.file.filename``).
They are forgotten only on ``PUT /connectors/{c}/topics/reset`` or when the
connector is deleted. A log-backed store (the ``connect-status`` topic) comes
with distributed mode.

The status file (rewritten whole and atomically when a connector uses a topic
for the first time, so rarely)::

    {"version": 1, "topics": {"orders-sink": ["orders", "returns"]}}
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from connect_worker.states import State
from connect_worker.storage.atomic import read_json, write_json_atomic

_FORMAT_VERSION = 1


class StatusStoreError(Exception):
    """The status file cannot be read."""


@dataclass(frozen=True, slots=True)
class StateRecord:
    """One reported state; ``trace`` is the failure's traceback, kept while relevant.

    ``generation`` is the group generation of the worker that reported it
    (distributed mode; 0 in standalone): a newer one wins in the status topic.
    """

    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


class StatusStore(Protocol):
    """Latest state per connector and per task, and active topics; thread-safe."""

    def load(self) -> None:
        """Read what an earlier run kept (once, at start; StatusStoreError if unreadable)."""
        ...

    def put_connector(self, name: str, record: StateRecord) -> None: ...

    def put_task(self, name: str, task_id: int, record: StateRecord) -> None: ...

    def connector(self, name: str) -> StateRecord | None: ...

    def tasks(self, name: str) -> dict[int, StateRecord]: ...

    def remove_task(self, name: str, task_id: int) -> None: ...

    def remove_connector(self, name: str) -> None:
        """Forget the connector's and its tasks' states (not its topics)."""
        ...

    def put_topic(self, name: str, topic: str) -> None:
        """Connector ``name`` used ``topic`` (kept until :meth:`reset_topics`)."""
        ...

    def topics(self, name: str) -> set[str]: ...

    def reset_topics(self, name: str) -> None: ...


class MemoryStatusStore:
    """Statuses in dicts under one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, StateRecord] = {}
        self._tasks: dict[str, dict[int, StateRecord]] = {}
        self._topics: dict[str, set[str]] = {}

    def load(self) -> None:
        """Nothing to read: memory starts empty."""

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

    def put_topic(self, name: str, topic: str) -> None:
        with self._lock:
            self._add_topic(name, topic)

    def _add_topic(self, name: str, topic: str) -> bool:
        """Add under the lock; whether it was new."""
        known = self._topics.setdefault(name, set())
        if topic in known:
            return False
        known.add(topic)
        return True

    def topics(self, name: str) -> set[str]:
        with self._lock:
            return set(self._topics.get(name, ()))

    def reset_topics(self, name: str) -> None:
        with self._lock:
            self._topics.pop(name, None)


class FileStatusStore(MemoryStatusStore):
    """States in memory; active topics also in a JSON file.

    Lifecycle: construct (reads nothing) -> :meth:`load` once at start
    (StatusStoreError, naming the file, if it exists but cannot be read) ->
    each first use of a topic by a connector, and each reset, rewrites the file.
    """

    def __init__(self, path: Path | str) -> None:
        super().__init__()
        self.path = Path(path)

    def load(self) -> None:
        topics = _read_topics(self.path)
        with self._lock:
            self._topics = topics

    def put_topic(self, name: str, topic: str) -> None:
        with self._lock:
            if self._add_topic(name, topic):
                self._write()

    def reset_topics(self, name: str) -> None:
        with self._lock:
            if self._topics.pop(name, None) is not None:
                self._write()

    def _write(self) -> None:
        topics = {name: sorted(found) for name, found in self._topics.items() if found}
        write_json_atomic(self.path, {"version": _FORMAT_VERSION, "topics": topics})


def _read_topics(path: Path) -> dict[str, set[str]]:
    try:
        data = read_json(path)
    except (OSError, ValueError) as exc:
        raise StatusStoreError(f"cannot read the status file {path}: {exc}") from exc
    if data is None:
        return {}
    topics = data.get("topics") if isinstance(data, dict) else None
    if not isinstance(topics, dict) or not all(
        isinstance(names, list) and all(isinstance(t, str) for t in names)
        for names in topics.values()
    ):
        raise StatusStoreError(
            f"{path}: expected {{'version': 1, 'topics': {{connector: [topic, ...]}}}}"
        )
    return {str(name): set(names) for name, names in topics.items()}
