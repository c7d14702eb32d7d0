"""Whether a log directory still takes writes (Kafka's offline log dir).

A failed write (ENOSPC, EIO, a short write, a failed fsync or roll) under a
log directory makes the whole directory *offline*, as Kafka does: every
partition in it refuses appends with :class:`~log_engine.errors.LogDirOfflineError`
(KAFKA_STORAGE_ERROR, 56) from then on, maintenance and checkpoints stop
there, and closing it does not write the clean-shutdown marker, so the next
start recovers its active segments. Reads of data already in the log keep
working: every failed append was rolled back first, so the files hold only
whole batches below the log end offset.

The state never goes back to online in a running process: a broker restarted
on the directory (once space is free or the disk is fixed) opens it afresh.
Listeners (:meth:`LogDirState.on_offline`) hear of the change once: a broker
of a cluster stops then, so that its partitions move to in-sync replicas.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from log_engine.errors import LogDirOfflineError

log = logging.getLogger(__name__)


class LogDirState:
    """Online/offline flag shared by a log directory's partition logs."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._lock = threading.Lock()
        self._offline_reason: str | None = None
        self._listeners: list[Callable[[str], None]] = []

    def on_offline(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(reason)`` once when the directory goes offline (from the
        thread whose write failed; at once if it is offline already)."""
        with self._lock:
            reason = self._offline_reason
            if reason is None:
                self._listeners.append(listener)
        if reason is not None:
            listener(reason)

    @property
    def offline(self) -> bool:
        return self._offline_reason is not None

    @property
    def offline_reason(self) -> str | None:
        return self._offline_reason

    def mark_offline(self, reason: str) -> None:
        """Stop writes under this directory (logged once, at the first failure)."""
        with self._lock:
            if self._offline_reason is not None:
                return
            self._offline_reason = reason
            listeners, self._listeners = self._listeners, []
        log.error(
            "log dir %s is now OFFLINE for writes: %s. Its partitions answer "
            "KAFKA_STORAGE_ERROR to produce until the broker restarts on it "
            "(free space / fix the disk first); acknowledged data stays readable.",
            self.log_dir,
            reason,
        )
        for listener in listeners:
            try:
                listener(reason)
            except Exception:
                log.exception("a listener of log dir %s going offline failed", self.log_dir)

    def check_online(self, what: str) -> None:
        """Raise LogDirOfflineError (naming ``what``) if the directory is offline."""
        reason = self._offline_reason
        if reason is not None:
            raise LogDirOfflineError(f"{what}: log dir {self.log_dir} is offline ({reason})")
