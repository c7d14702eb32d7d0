"""One task's thread: runs its runner and restarts it after a failure.

Kafka Connect leaves a FAILED task failed until someone calls the restart
endpoint; Sluice restarts it by itself when ``task.restart.enabled`` (the
default), waiting ``task.restart.backoff.initial.ms`` and doubling up to
``task.restart.backoff.max.ms``. States reported for a failing task::

    RUNNING --raises--> FAILED (trace) --backoff--> RESTARTING (same trace) --> RUNNING (no trace)

The trace of the last failure stays in the status until the task runs again.
A run that lasted longer than the maximum backoff counts as healthy: the
next failure starts again from the initial delay.

Logging stays bounded when a task fails the same way again and again: the
first failure of a kind is logged with its full trace, headed by one line
with the cause and, for a bad record under ``errors.tolerance=none``, the
record's topic, partition and offset and what gets the task past it (said
once: the task meets the same record at every restart); a later failure with
the same cause (same exception type and message, or the same frames) logs one
short line with the attempt number and the next delay, so the log grows by at
most one line per backoff step. The full trace is always in the status.

Each attempt builds a fresh plugin task and runner (``make_runner``, called
in the task thread, so a slow plugin constructor never blocks the herder).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from connect_worker.log_context import set_task_context
from connect_worker.runtime.backoff import ExponentialBackoff
from connect_worker.runtime.error_handling import RecordPosition
from connect_worker.runtime.status import StatusListener, TaskId
from connect_worker.runtime.task_runner import TaskRunner
from connect_worker.states import State

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import TaskMetrics

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """``task.restart.*``: whether and how fast failed tasks restart by themselves."""

    enabled: bool = True
    backoff_initial_ms: int = 1000
    backoff_max_ms: int = 60000


#: How much of an exception's message a short repeat line quotes.
_MESSAGE_CHARS = 200

#: Said once, after the first failure on a record under ``errors.tolerance=none``.
_STUCK_ON_RECORD = (
    "; with errors.tolerance=none the task fails on this same record at every restart, "
    "and nothing after it is processed, until the pipeline's config can process it or "
    "skips bad records (errors.tolerance=all, with errors.deadletterqueue.topic.name "
    "to keep them)"
)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt: the trace for the status and what identifies its cause."""

    trace: str
    summary: str  # "Type: message", cut to a line's length
    kind: tuple[str, str] = field(repr=False)  # (type, full message)
    frames: tuple[str, tuple[tuple[str, int], ...]] = field(repr=False)  # (type, frames)
    where: RecordPosition | None = None  # the record involved, when the runner attached it

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        name = type(exc).__qualname__
        message = str(exc)
        frames = tuple((f.filename, f.lineno or 0) for f in traceback.extract_tb(exc.__traceback__))
        short = message if len(message) <= _MESSAGE_CHARS else message[:_MESSAGE_CHARS] + "..."
        return cls(
            trace=traceback.format_exc(),
            summary=f"{name}: {short}",
            kind=(name, message),
            frames=(name, frames),
            where=_record_position(exc),
        )

    def same_cause(self, other: Failure | None) -> bool:
        return other is not None and (self.kind == other.kind or self.frames == other.frames)


def _record_position(exc: BaseException) -> RecordPosition | None:
    """Where the record is that an exception (or one of its causes) names."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        position = getattr(current, "record_position", None)
        if isinstance(position, RecordPosition):
            return position
        current = current.__cause__ or current.__context__
    return None


class TaskThread:
    """Runs one task in a named daemon thread (see the module doc).

    Lifecycle: construct -> :meth:`start` -> pause()/resume() any number of
    times -> :meth:`request_stop` (returns at once) -> :meth:`join`. The
    state reported last is in :attr:`state`.
    """

    def __init__(
        self,
        task_id: TaskId,
        make_runner: Callable[[], TaskRunner],
        listener: StatusListener,
        policy: RestartPolicy,
        *,
        paused: bool = False,
        metrics: TaskMetrics | None = None,
    ) -> None:
        self.task_id = task_id
        self.metrics = metrics
        self._make_runner = make_runner
        self._listener = listener
        self._policy = policy
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._paused = paused
        self._runner: TaskRunner | None = None
        self.state = State.UNASSIGNED
        self.trace: str | None = None
        self.failures = 0
        self._running = False  # the current attempt reached RUNNING
        self._thread = threading.Thread(target=self._main, name=f"task-{task_id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def pause(self) -> None:
        with self._lock:
            self._paused = True
            if self._runner is not None:
                self._runner.pause()
            if self.state is State.RUNNING:
                self._report(State.PAUSED, None)

    def resume(self) -> None:
        with self._lock:
            self._paused = False
            if self._runner is not None:
                self._runner.resume()
            if self.state is State.PAUSED:
                self._report(State.RUNNING, None)

    def request_stop(self) -> None:
        """Ask the task to stop; returns at once (use :meth:`join` to wait)."""
        with self._lock:
            self._stop.set()
            runner = self._runner
        if runner is not None:
            runner.stop()

    def join(self, timeout_s: float | None = None) -> bool:
        """Wait for the thread to end; False if it is still running after ``timeout_s``."""
        if self._thread.ident is not None:
            self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def details(self) -> dict[str, Any]:
        """The running plugin task's progress (``{}`` between runs)."""
        with self._lock:
            runner = self._runner
        return runner.details() if runner is not None else {}

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # -- the thread ----------------------------------------------------------------------

    def _main(self) -> None:
        set_task_context(self.task_id.connector, self.task_id.task)
        backoff = ExponentialBackoff(
            max(1, self._policy.backoff_initial_ms),
            max(1, self._policy.backoff_initial_ms, self._policy.backoff_max_ms),
        )
        previous: Failure | None = None
        while not self._stop.is_set():
            started = time.monotonic()
            failure = self._run_once()
            if failure is None:
                return  # stopped cleanly
            self.failures += 1
            trace = failure.trace
            with self._lock:
                self._runner = None
                self._report(State.FAILED, trace)
            if not self._policy.enabled:
                self._log_failure(failure, previous, None)
                return
            if time.monotonic() - started > backoff.max_ms / 1000:
                backoff.reset()
            delay_s = backoff.next_delay_s()
            self._log_failure(failure, previous, delay_s)
            previous = failure
            if self._stop.wait(delay_s):
                return
            with self._lock:
                if self._stop.is_set():
                    return
                self._report(State.RESTARTING, trace)

    def _log_failure(
        self, failure: Failure, previous: Failure | None, delay_s: float | None
    ) -> None:
        """The full trace for a new kind of failure, one short line for a repeat."""
        then = "not restarting" if delay_s is None else f"restarting in {delay_s:.1f}s"
        where = f" at record {failure.where}" if failure.where else ""
        if failure.same_cause(previous):
            log.warning(
                "task %s failed again (attempt %d)%s: same error as before (%s); %s; "
                "full trace in the task's status",
                self.task_id,
                self.failures,
                where,
                failure.summary,
                then,
            )
        else:
            log.error(
                "task %s failed (attempt %d)%s: %s%s; %s\n%s",
                self.task_id,
                self.failures,
                f"{where} ({failure.where.spelled_out()})" if failure.where else "",
                failure.summary,
                _STUCK_ON_RECORD if failure.where else "",
                then,
                failure.trace.rstrip(),
            )

    def _run_once(self) -> Failure | None:
        """One attempt; how it failed, or None after a clean stop."""
        if self.metrics is not None:
            self.metrics.attempt_started()
        self._running = False
        failure = self._attempt()
        if failure is not None and not self._running and self.metrics is not None:
            self.metrics.attempt_failed_to_start()
        return failure

    def _attempt(self) -> Failure | None:
        try:
            runner = self._make_runner()
        except Exception as exc:
            return Failure.of(exc)
        with self._lock:
            if self._stop.is_set():
                return None
            self._runner = runner
            if self._paused:
                runner.pause()
        try:
            runner.run(self._on_running)
        except Exception as exc:
            return Failure.of(exc)
        if not self._stop.is_set():
            log.error("task %s ended without being asked to stop", self.task_id)
        return None

    def _on_running(self) -> None:
        self._running = True
        if self.metrics is not None:
            self.metrics.attempt_running()
        with self._lock:
            self._report(State.PAUSED if self._paused else State.RUNNING, None)

    def _report(self, state: State, trace: str | None) -> None:
        """Record and publish a state (called with the lock held; listeners never block)."""
        self.state, self.trace = state, trace
        if self.metrics is not None:
            self.metrics.state_changed(state)
        try:
            self._listener.on_task_state(self.task_id, state, trace)
        except Exception:
            log.exception("task %s: status listener failed", self.task_id)
