"""Connector configs and target states, and where they came from.

Standalone mode keeps the connectors created over REST in one JSON file
(``connector.configs.file``) so they survive a restart. Connectors declared by
pipeline files are not written there: the pipelines folder is their source of
truth and the watcher loads them again at start. Each stored connector carries
its ``source`` (``"rest"`` or ``"file"``) for that reason.

File format (rewritten whole and atomically on each change)::

    {
     "version": 1,
     "connectors": {
      "orders-sink": {"config": {"connector.class": "...", ...}, "target_state": "PAUSED"}
     }
    }

Configs are stored as given, ``${provider:path:key}`` references unresolved,
so secrets kept behind config providers never reach this file; the file is
created readable by its owner only (0600).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from connect_worker.states import TargetState
from connect_worker.storage.atomic import read_json, write_json_atomic

ConfigSource = Literal["rest", "file"]
_FORMAT_VERSION = 1


class ConfigStoreError(Exception):
    """The connector configs file cannot be read."""


@dataclass(frozen=True, slots=True)
class StoredConnector:
    """One connector as the control plane stores it."""

    name: str
    config: dict[str, str]
    target_state: TargetState = TargetState.RUNNING
    source: ConfigSource = "rest"

    def with_state(self, state: TargetState) -> StoredConnector:
        return replace(self, target_state=state)


class ConfigStore(Protocol):
    """Persistence of connector configs and target states; thread-safe."""

    def load(self) -> list[StoredConnector]:
        """The connectors persisted by an earlier run."""
        ...

    def put(self, connector: StoredConnector) -> None:
        """Create or replace ``connector`` (its config, target state and source)."""
        ...

    def remove(self, name: str) -> None:
        """Forget connector ``name`` (no error when unknown)."""
        ...


class MemoryConfigStore:
    """Keeps connectors in a dict; nothing survives the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, StoredConnector] = {}

    def load(self) -> list[StoredConnector]:
        with self._lock:
            return list(self._connectors.values())

    def put(self, connector: StoredConnector) -> None:
        with self._lock:
            self._connectors[connector.name] = connector

    def remove(self, name: str) -> None:
        with self._lock:
            self._connectors.pop(name, None)


class FileConfigStore:
    """Keeps REST-created connectors in ``connector.configs.file``.

    Lifecycle: construct (reads nothing) -> :meth:`load` once at start
    (ConfigStoreError if the file is unreadable) -> put/remove, each of which
    rewrites the file when a REST-created connector changed.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._persisted: dict[str, StoredConnector] = {}

    def load(self) -> list[StoredConnector]:
        with self._lock:
            self._persisted = _read(self.path)
            return list(self._persisted.values())

    def put(self, connector: StoredConnector) -> None:
        with self._lock:
            if connector.source == "rest":
                self._persisted[connector.name] = connector
            elif self._persisted.pop(connector.name, None) is None:
                return  # a pipeline-file connector: the folder is its source of truth
            self._write()

    def remove(self, name: str) -> None:
        with self._lock:
            if self._persisted.pop(name, None) is not None:
                self._write()

    def _write(self) -> None:
        connectors = {
            c.name: {"config": c.config, "target_state": c.target_state.value}
            for c in self._persisted.values()
        }
        write_json_atomic(self.path, {"version": _FORMAT_VERSION, "connectors": connectors})


def _read(path: Path) -> dict[str, StoredConnector]:
    try:
        data = read_json(path)
    except (OSError, ValueError) as exc:
        raise ConfigStoreError(f"cannot read the connector configs file {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("connectors"), dict):
        raise ConfigStoreError(f"{path}: expected {{'version': 1, 'connectors': {{...}}}}")
    found: dict[str, StoredConnector] = {}
    for name, entry in data["connectors"].items():
        try:
            config = {str(k): str(v) for k, v in entry["config"].items()}
            state = TargetState(entry.get("target_state", TargetState.RUNNING.value))
        except (KeyError, AttributeError, TypeError, ValueError) as exc:
            raise ConfigStoreError(f"{path}: bad entry for connector {name!r}: {exc}") from exc
        found[name] = StoredConnector(name, config, state, "rest")
    return found
