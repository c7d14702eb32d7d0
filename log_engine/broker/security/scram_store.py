"""SCRAM credentials, stored salted (never the password) in a file of the log dir.

Each credential is what RFC 5802 lets a server keep: salt, StoredKey, ServerKey
and the iteration count, per mechanism (SCRAM-SHA-256, SCRAM-SHA-512) and user.
The file ``__scram_credentials.json`` is rewritten atomically on every change.
A single broker keeps its users here; a clustered broker's users are
UserScramCredentialRecords of the metadata log (``broker/cluster/scram.py``),
with this store (its bootstrap users) as the fallback.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from scramp import ScramMechanism

SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
MIN_ITERATIONS = 4096
FILE_NAME = "__scram_credentials.json"


@dataclass(frozen=True)
class ScramCredential:
    """A salted credential of one user for one mechanism."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def auth_info(self) -> tuple[bytes, bytes, bytes, int]:
        """The tuple scramp's server asks for."""
        return self.salt, self.stored_key, self.server_key, self.iterations

    @classmethod
    def from_password(
        cls, mechanism: str, password: str, iterations: int = MIN_ITERATIONS
    ) -> ScramCredential:
        salt, stored, server, count = ScramMechanism(mechanism).make_auth_info(
            password, iteration_count=iterations
        )
        return cls(salt, stored, server, count)


class ScramLookup(Protocol):
    """What a SASL session and DescribeUserScramCredentials read: a file store, or a
    clustered broker's metadata image (``broker/cluster/scram.py``)."""

    def get(self, mechanism: str, user: str) -> ScramCredential | None: ...

    def users(self) -> dict[str, dict[str, int]]: ...


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class ScramCredentialStore:
    """Credentials by mechanism and user, persisted in ``<log dir>/__scram_credentials.json``."""

    def __init__(self, log_dir: Path) -> None:
        self._path = log_dir / FILE_NAME
        self._lock = threading.Lock()
        self._credentials: dict[str, dict[str, ScramCredential]] = {
            m: {} for m in SCRAM_MECHANISMS
        }
        if self._path.exists():
            raw = json.loads(self._path.read_text())
            for mechanism, users in raw.items():
                for user, c in users.items():
                    self._credentials.setdefault(mechanism, {})[user] = ScramCredential(
                        base64.b64decode(c["salt"]),
                        base64.b64decode(c["stored_key"]),
                        base64.b64decode(c["server_key"]),
                        int(c["iterations"]),
                    )

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._credentials.get(mechanism, {}).get(user)

    def users(self) -> dict[str, dict[str, int]]:
        """user -> mechanism -> iterations (what DescribeUserScramCredentials shows)."""
        out: dict[str, dict[str, int]] = {}
        for mechanism, users in self._credentials.items():
            for user, c in users.items():
                out.setdefault(user, {})[mechanism] = c.iterations
        return out

    def set(self, mechanism: str, user: str, credential: ScramCredential) -> None:
        if mechanism not in SCRAM_MECHANISMS:
            raise ValueError(f"unknown SCRAM mechanism {mechanism}")
        if credential.iterations < MIN_ITERATIONS:
            raise ValueError(f"iterations must be at least {MIN_ITERATIONS}")
        with self._lock:
            self._credentials[mechanism][user] = credential
            self._save()

    def delete(self, mechanism: str, user: str) -> bool:
        with self._lock:
            removed = self._credentials.get(mechanism, {}).pop(user, None) is not None
            if removed:
                self._save()
            return removed

    def _save(self) -> None:
        raw = {
            mechanism: {
                user: {
                    "salt": _b64(c.salt),
                    "stored_key": _b64(c.stored_key),
                    "server_key": _b64(c.server_key),
                    "iterations": c.iterations,
                }
                for user, c in users.items()
            }
            for mechanism, users in self._credentials.items()
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(raw, f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, self._path)


_STORES: dict[Path, ScramCredentialStore] = {}
_STORES_LOCK = threading.Lock()


def store_for(log_dir: Path) -> ScramCredentialStore:
    """The one store of a log dir in this process (listeners and admin APIs share it)."""
    key = log_dir.resolve()
    with _STORES_LOCK:
        if key not in _STORES:
            _STORES[key] = ScramCredentialStore(key)
        return _STORES[key]
