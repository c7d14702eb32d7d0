"""Source offsets: where each source task's partitions stood when last committed.

A source partition is a small JSON object chosen by the connector
(``{"filename": "/var/log/app.log"}``) and its offset another one
(``{"position": 1234}``). Stores key offsets by connector and by the
partition's canonical JSON (:func:`partition_key`: sorted keys, no spaces), so
the same partition always lands on the same entry whatever the dict's order.

The file store keeps one JSON object whose keys are Kafka Connect's offset
keys, ``["<connector>",{<partition>}]``, and whose values are the offsets::

    {
     "[\"tail\",{\"filename\":\"/var/log/app.log\"}]": {"position": 1234}
    }

It is rewritten whole on :meth:`FileOffsetStore.flush` (temporary file, fsync,
rename), so a crash leaves either the previous flush or the new one. Writes
between flushes live in memory; the worker flushes after each offset commit.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from connect_worker.storage.atomic import read_json, write_json_atomic

Offset = dict[str, Any]


class OffsetStoreError(Exception):
    """The offsets file cannot be read (not JSON, or keys not in Kafka's shape)."""


def partition_key(partition: Mapping[str, Any]) -> str:
    """The canonical JSON of a source partition (sorted keys, compact)."""
    return json.dumps(partition, sort_keys=True, separators=(",", ":"))


def partition_of(key: str) -> dict[str, Any]:
    """The source partition a :func:`partition_key` string stands for."""
    value = json.loads(key)
    if not isinstance(value, dict):
        raise ValueError(f"a source partition must be a JSON object, got {key!r}")
    return value


class OffsetStore(Protocol):
    """Where source tasks' committed offsets live; thread-safe.

    ``put_all`` maps :func:`partition_key` strings to offsets; a None offset
    removes the entry. ``flush`` makes everything put so far durable.
    """

    def get(self, connector: str, partition: Mapping[str, Any]) -> Offset | None: ...

    def get_all(self, connector: str) -> dict[str, Offset]: ...

    def put_all(self, connector: str, offsets: Mapping[str, Offset | None]) -> None: ...

    def flush(self) -> None: ...


class MemoryOffsetStore:
    """Offsets in a dict; lost with the process (tests, dry runs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offsets: dict[str, dict[str, Offset]] = {}

    def get(self, connector: str, partition: Mapping[str, Any]) -> Offset | None:
        with self._lock:
            offset = self._offsets.get(connector, {}).get(partition_key(partition))
            return None if offset is None else dict(offset)

    def get_all(self, connector: str) -> dict[str, Offset]:
        with self._lock:
            return {k: dict(v) for k, v in self._offsets.get(connector, {}).items()}

    def put_all(self, connector: str, offsets: Mapping[str, Offset | None]) -> None:
        with self._lock:
            entries = self._offsets.setdefault(connector, {})
            for key, offset in offsets.items():
                canonical = partition_key(partition_of(key))
                if offset is None:
                    entries.pop(canonical, None)
                else:
                    entries[canonical] = dict(offset)
            if not entries:
                del self._offsets[connector]
            self._changed()

    def flush(self) -> None:
        """Nothing to do: memory is all there is."""

    def _changed(self) -> None:
        """Called with the lock held after each put (subclasses note dirtiness)."""

    def _snapshot(self) -> dict[str, dict[str, Offset]]:
        return {c: {k: dict(v) for k, v in e.items()} for c, e in self._offsets.items()}


class FileOffsetStore(MemoryOffsetStore):
    """Offsets in one JSON file (``offset.storage.file.filename``), standalone mode.

    Lifecycle: construct (reads the file if it exists; OffsetStoreError when it
    is unreadable) -> get/put_all ... -> flush() after each commit. Flushes are
    serialised; a flush with nothing new is skipped.
    """

    def __init__(self, path: Path | str) -> None:
        super().__init__()
        self.path = Path(path)
        self._flush_lock = threading.Lock()
        self._dirty = False
        self._offsets.update(_load(self.path))

    def _changed(self) -> None:
        self._dirty = True

    def flush(self) -> None:
        with self._flush_lock:
            with self._lock:
                if not self._dirty:
                    return
                snapshot = self._snapshot()
                self._dirty = False
            try:
                write_json_atomic(self.path, _to_file(snapshot))
            except BaseException:
                with self._lock:
                    self._dirty = True
                raise


def _to_file(offsets: dict[str, dict[str, Offset]]) -> dict[str, Offset]:
    out: dict[str, Offset] = {}
    for connector, entries in offsets.items():
        for key, offset in entries.items():
            out[f"[{json.dumps(connector)},{key}]"] = offset
    return out


def _load(path: Path) -> dict[str, dict[str, Offset]]:
    try:
        data = read_json(path)
    except (OSError, ValueError) as exc:
        raise OffsetStoreError(f"cannot read the offsets file {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise OffsetStoreError(f"{path}: expected a JSON object of offsets")
    offsets: dict[str, dict[str, Offset]] = {}
    for key, offset in data.items():
        try:
            connector, partition = json.loads(key)
        except (ValueError, TypeError) as exc:
            raise OffsetStoreError(f"{path}: bad offset key {key!r}") from exc
        if not isinstance(connector, str) or not isinstance(partition, dict):
            raise OffsetStoreError(f"{path}: bad offset key {key!r}")
        if not isinstance(offset, dict):
            raise OffsetStoreError(f"{path}: offset of {key!r} is not a JSON object")
        offsets.setdefault(connector, {})[partition_key(partition)] = offset
    return offsets
