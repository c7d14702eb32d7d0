"""What source and sink runners share: stop, pause and the stop-before-start race.

A runner owns one task's loop in the task's thread (STYLE practice 6).
Lifecycle, driven by :class:`~connect_worker.runtime.task_thread.TaskThread`::

    runner = SourceTaskRunner(...)     # cheap: no threads, no connections
    runner.run(on_running)             # in the task thread: start the task, loop, clean up
    runner.pause() / runner.resume()   # any thread: the loop stops/starts polling
    runner.stop()                      # any thread: the loop ends, run() returns

``run`` returns normally after a stop and raises when the task failed; the
exception's traceback becomes the task's trace. ``stop`` may come at any
moment, even before the plugin's ``start`` returned: the plugin's ``stop`` is
then called by the task thread once ``start`` is done, never concurrently
with it.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from connect_worker.runtime.details import plugin_details
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.task_parts import TaskParts

log = logging.getLogger(__name__)

#: Waits inside a loop (paused, backing off) wake at least this often.
WAKE_INTERVAL_S = 0.5


class TaskRunner(ABC):
    """Base of :class:`SourceTaskRunner` and :class:`SinkTaskRunner` (see the module doc)."""

    def __init__(
        self,
        task_id: TaskId,
        parts: TaskParts,
    ) -> None:
        self.task_id = task_id
        self.stopping = parts.stopping
        self._resumed = threading.Event()
        self._resumed.set()
        self._lifecycle_lock = threading.Lock()
        self._plugin_started = False
        self._plugin_stopped = False
        self._retry_backoff = parts.retry_backoff

    @abstractmethod
    def run(self, on_running: Callable[[], None]) -> None:
        """Start the plugin task and run its loop until stopped (the task thread)."""

    @abstractmethod
    def _stop_plugin(self) -> None:
        """Call the plugin task's ``stop()``."""

    def details(self) -> dict[str, Any]:
        """The plugin task's progress for its status (``{}`` until it started)."""
        if not self._plugin_started:
            return {}
        return plugin_details(getattr(self, "task", None), f"task {self.task_id}")

    @property
    def paused(self) -> bool:
        return not self._resumed.is_set()

    def pause(self) -> None:
        """Stop polling/putting until :meth:`resume` (offsets keep being committed)."""
        if not self.stopping.is_set():
            self._resumed.clear()

    def resume(self) -> None:
        self._resumed.set()

    def stop(self) -> None:
        """Ask the loop to end; calls the plugin's ``stop()`` if it has started."""
        self.stopping.set()
        self._resumed.set()
        self._stop_plugin_once(only_if_started=True)

    # -- for subclasses ------------------------------------------------------------------

    def _plugin_start_done(self) -> bool:
        """Record that the plugin started; False if a stop came meanwhile (then stop it)."""
        with self._lifecycle_lock:
            self._plugin_started = True
        if self.stopping.is_set():
            self._stop_plugin_once(only_if_started=True)
            return False
        return True

    def _stop_plugin_once(self, *, only_if_started: bool) -> None:
        with self._lifecycle_lock:
            if self._plugin_stopped or (only_if_started and not self._plugin_started):
                return
            self._plugin_stopped = True
        try:
            self._stop_plugin()
        except Exception:
            log.exception("task %s: stop() raised", self.task_id)

    def _wait_while_paused(self, timeout_s: float = WAKE_INTERVAL_S) -> bool:
        """Block while paused (at most ``timeout_s``); True if the loop may go on working."""
        if self._resumed.is_set():
            return not self.stopping.is_set()
        self._resumed.wait(timeout_s)
        return self._resumed.is_set() and not self.stopping.is_set()

    def _back_off(self, what: str, error: BaseException) -> None:
        """Sleep before retrying after a retriable ``error`` (woken early by stop)."""
        delay_s = self._retry_backoff.next_delay_s()
        log.warning(
            "task %s: %s failed (%s: %s); retrying in %.2fs (attempt %d)",
            self.task_id,
            what,
            type(error).__name__,
            error,
            delay_s,
            self._retry_backoff.attempts,
        )
        self.stopping.wait(delay_s)
