"""Where a broker keeps its ACL bindings.

:class:`AclStore` is what the authorizer needs: the bindings, a ``version``
that changes with them (the authorizer's decision cache follows it), and
add/remove. :class:`FileAclStore` is the single-node store (a clustered
broker's is ``broker/cluster/acls.py``, over the metadata image):
``<log dir>/__acls.json``, a JSON object ``{"version": 1, "acls": [binding,
...]}`` with each binding's enums by name, rewritten atomically (temp file,
fsync, rename) on every change. A file that does not parse stops the broker
with a message naming it: silently starting with no ACLs could open (or
close) every resource.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from log_engine.acls import AclBinding, AclError, AclFilter

FILE_NAME = "__acls.json"
_FORMAT_VERSION = 1


class AclStoreError(Exception):
    """The stored ACLs cannot be read; the message names the file and the fix."""


class AclWriteError(Exception):
    """A change to the ACLs was not made (a cluster's controller refused or did not answer)."""

    def __init__(self, error_code: int, message: str | None) -> None:
        super().__init__(message or f"error code {error_code}")
        self.error_code = error_code


class AclStore(Protocol):
    """The bindings the authorizer decides with."""

    @property
    def version(self) -> int:
        """Changes whenever the bindings change."""
        ...

    def bindings(self) -> list[AclBinding]: ...

    async def add(self, bindings: Iterable[AclBinding]) -> None:
        """Keep these bindings (one already stored is kept once); :class:`AclWriteError`."""
        ...

    async def remove(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """Remove the bindings each filter matches; per filter, what it removed
        (:class:`AclWriteError` when nothing could be removed)."""
        ...


class FileAclStore:
    """ACL bindings in ``<log dir>/__acls.json`` (one broker, no metadata log)."""

    def __init__(self, log_dir: Path) -> None:
        self._path = log_dir / FILE_NAME
        self._lock = threading.Lock()
        self._bindings: dict[AclBinding, None] = {}
        self.version = 0
        if self._path.exists():
            for binding in _load(self._path):
                self._bindings[binding] = None

    def bindings(self) -> list[AclBinding]:
        return list(self._bindings)

    async def add(self, bindings: Iterable[AclBinding]) -> None:
        with self._lock:
            before = len(self._bindings)
            for binding in bindings:
                self._bindings[binding] = None
            if len(self._bindings) != before:
                self._changed()

    async def remove(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        with self._lock:
            removed = [[b for b in self._bindings if f.matches(b)] for f in filters]
            gone = {b for group in removed for b in group}
            if gone:
                for binding in gone:
                    del self._bindings[binding]
                self._changed()
            return removed

    def _changed(self) -> None:
        self._save()
        self.version += 1

    def _save(self) -> None:
        raw = {"version": _FORMAT_VERSION, "acls": [b.to_json() for b in self._bindings]}
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(raw, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path)
        fd = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _load(path: Path) -> list[AclBinding]:
    try:
        raw = json.loads(path.read_text())
        if not isinstance(raw, dict) or raw.get("version") != _FORMAT_VERSION:
            raise AclError(f"expected an object with \"version\": {_FORMAT_VERSION}")
        items = raw["acls"]
        if not isinstance(items, list):
            raise AclError('"acls" is not a list')
        return [AclBinding.from_json(item) for item in items]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AclStoreError(
            f"the ACL file {path} cannot be read ({exc}); restore it from a backup, "
            "or remove it to start with no ACLs (super.users still get in)"
        ) from None
