"""Writing closed batches in the background, in order, so consuming goes on meanwhile.

One :class:`Uploader` per sink task runs jobs (write one batch's objects) on
a thread of its own, first in, first out, so a Kafka partition's batches
reach S3 in order and its committed offset only moves forward. At most
``max_queued`` jobs wait; ``submit`` blocks beyond that (memory stays
bounded). A job that raises stops the queue: the next ``check()`` (called
by the task before taking records and in ``pre_commit``) runs it again in the
caller's thread and raises if it fails again, so the runtime retries with a
backoff. With ``background=False`` jobs run inline (same failure handling).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

Job = Callable[[], None]


class Uploader:
    """Runs upload jobs one at a time, in order, on a background thread."""

    def __init__(self, *, background: bool = True, max_queued: int = 2) -> None:
        self._background = background
        self._max_queued = max_queued
        self._jobs: deque[Job] = deque()
        self._failed: tuple[Job, BaseException] | None = None
        self._running = False
        self._closed = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._main, name="s3-uploader", daemon=True)
            self._thread.start()

    def submit(self, job: Job) -> None:
        """Queue ``job`` (run it now without a background thread); raises an earlier failure."""
        self.check()
        if not self._background:
            self._run_inline(job)
            return
        with self._cond:
            while len(self._jobs) >= self._max_queued and self._failed is None:
                self._cond.wait(0.5)
            self._jobs.append(job)
            self._cond.notify_all()

    def check(self) -> None:
        """Retry a failed job here; raise if it fails again."""
        with self._cond:
            failed = self._failed
        if failed is None:
            return
        job, _ = failed
        job()  # raises again: the queue stays stopped
        with self._cond:
            self._failed = None
            self._cond.notify_all()

    def drain(self) -> None:
        """Wait until every queued job ran (or one failed)."""
        with self._cond:
            while (self._jobs or self._running) and self._failed is None:
                self._cond.wait(0.5)

    def discard(self) -> None:
        """Drop queued and failed jobs (their records are read again after a restart)."""
        with self._cond:
            self._jobs.clear()
            self._failed = None
            self._cond.notify_all()

    def close(self) -> None:
        self.discard()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run_inline(self, job: Job) -> None:
        try:
            job()
        except BaseException as exc:
            with self._cond:
                self._failed = (job, exc)
            raise

    def _main(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._jobs or self._failed is not None):
                    self._cond.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
                self._running = True
            try:
                job()
            except BaseException as exc:  # kept for check(), which raises it in the task
                with self._cond:
                    self._failed = (job, exc)
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()
