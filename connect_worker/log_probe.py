"""Can the worker reach its Kafka cluster? One Metadata request answers (``GET /health``).

:class:`LogProbe` keeps one admin client and asks the cluster for its
metadata with a short timeout; after a failure the client is dropped and the
next check starts a fresh one (so a cluster that comes back is seen again).
Checks are serialised; a check run within ``cache_ms`` of the last one
reuses its answer, so a busy health checker sends at most one request per
``cache_ms``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping

from connect_worker.lazy_admin import LazyAdmin

log = logging.getLogger(__name__)


class LogProbe:
    """Checks that the cluster at ``bootstrap`` answers (see the module doc)."""

    def __init__(
        self,
        bootstrap: str,
        admin_props: Mapping[str, str] | None = None,
        *,
        timeout_ms: int = 3000,
        cache_ms: int = 500,
    ) -> None:
        self._bootstrap = bootstrap
        self._config = {
            **dict(admin_props or {}),
            "bootstrap.servers": bootstrap,
            "client.id": "sluice-health-probe",
            "default.api.timeout.ms": str(timeout_ms),
            "request.timeout.ms": str(timeout_ms),
        }
        self._cache_s = cache_ms / 1000
        self._lock = threading.Lock()
        self._admin = LazyAdmin(self._config, "health probe")
        self._last: tuple[float, str | None] | None = None

    def problem(self) -> str | None:
        """None when the cluster answered; else why it could not be reached."""
        with self._lock:
            now = time.monotonic()
            if self._last is not None and now - self._last[0] < self._cache_s:
                return self._last[1]
            answer = self._check()
            self._last = (time.monotonic(), answer)
            return answer

    def _check(self) -> str | None:
        try:
            self._admin.get().describe_cluster()
        except Exception as exc:
            self._admin.drop()
            cause = f"{type(exc).__name__}: {exc}"
            return f"cannot reach the Kafka cluster at {self._bootstrap}: {cause}"
        return None

    def close(self) -> None:
        with self._lock:
            self._admin.drop()
