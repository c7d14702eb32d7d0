"""A single thread that runs control-plane operations one at a time.

The herder runs every change (create, reconfigure, pause, restart, delete)
here, in order, like Kafka's herder thread: two REST calls on the same
connector can never interleave, and the herder's state lock is held only for
short updates, never while tasks are being stopped and joined. Callers wait
for their operation (:meth:`ControlThread.call`) or fire and forget
(:meth:`ControlThread.submit`, for requests coming from plugin threads).
The queue is bounded: a caller blocks while it is full.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
_Item = tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None


class ControlThreadStopped(RuntimeError):
    """The control thread is stopped: no more operations are accepted."""


class ControlThread:
    """Runs callables serially on one daemon thread (see the module doc).

    Lifecycle: construct (starts the thread) -> call()/submit() ... -> stop().
    """

    def __init__(self, name: str = "herder", *, max_queued: int = 1000) -> None:
        self._queue: queue.Queue[_Item] = queue.Queue(max_queued)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def on_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the control thread and return its result (or raise its error).

        Called from the control thread itself, ``fn`` runs at once (no deadlock).
        """
        if self.on_thread():
            return fn()
        return self.submit(fn).result()

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Queue ``fn``; its future holds the result."""
        if self._stopped.is_set():
            raise ControlThreadStopped("the worker is shutting down")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._queue.put((fn, future))
        return future

    def stop(self, timeout_s: float | None = None) -> None:
        """Run what is queued, then end the thread."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._queue.put(None)
        if not self.on_thread():
            self._thread.join(timeout_s)

    def _main(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
