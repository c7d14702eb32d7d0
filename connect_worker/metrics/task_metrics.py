"""What the runtime measures per task and per worker, kept as plain numbers.

The runners and the task thread update these objects in the task's thread,
once per batch (never per record); :mod:`.collector` reads them when
``GET /metrics`` is scraped and renders Kafka Connect's names. A task's
metrics live as long as the worker runs the task: they survive its automatic
restarts (Kafka Connect's restart from zero, Sluice's keep counting), and go
when the task is stopped.

Values the runners know better than a counter (records in flight, assigned
partitions, consumer lag) are read at scrape time through the ``live_*``
callables a runner sets while it runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from connect_worker.metrics.plugin_metrics import PluginMetrics
from connect_worker.metrics.rebalance_metrics import RebalanceMetrics
from connect_worker.metrics.stats import SampleWindow, WindowedStat
from connect_worker.runtime.status import TaskId
from connect_worker.states import State


@dataclass(frozen=True, slots=True)
class PartitionLag:
    """One partition a sink task reads: how far its position is behind the log end."""

    topic: str
    partition: int
    lag: int


def _no_lags() -> list[PartitionLag]:
    return []


def _zero() -> int:
    return 0


class SourceMetrics:
    """``source-task-metrics``: records polled and written, poll time."""

    def __init__(self, window: SampleWindow, now: float) -> None:
        self.poll_total = 0
        self.write_total = 0
        self.poll = WindowedStat(window, now)  # records per poll(): rate
        self.write = WindowedStat(window, now)  # records handed to the producer: rate
        self.poll_time_ms = WindowedStat(window, now)
        self.live_active_count: Callable[[], int] = _zero

    def record_poll(self, count: int, took_s: float, now: float) -> None:
        self.poll_total += count
        self.poll.record(count, now)
        self.poll_time_ms.record(took_s * 1000, now)

    def record_write(self, count: int, now: float) -> None:
        self.write_total += count
        self.write.record(count, now)


class SinkMetrics:
    """``sink-task-metrics``: records read and sent to ``put``, put time, commits, lag."""

    def __init__(self, window: SampleWindow, now: float) -> None:
        self.read_total = 0
        self.send_total = 0
        self.read = WindowedStat(window, now)
        self.send = WindowedStat(window, now)
        self.put_time_ms = WindowedStat(window, now)
        self.commit_completion_total = 0
        self.commit_completion = WindowedStat(window, now)
        self.live_partition_count: Callable[[], int] = _zero
        self.live_active_count: Callable[[], int] = _zero
        self.live_lags: Callable[[], list[PartitionLag]] = _no_lags
        self.client_id = ""

    def record_read(self, count: int, now: float) -> None:
        self.read_total += count
        self.read.record(count, now)

    def record_put(self, count: int, took_s: float, now: float) -> None:
        self.send_total += count
        self.send.record(count, now)
        self.put_time_ms.record(took_s * 1000, now)

    def record_commit_completed(self, now: float) -> None:
        self.commit_completion_total += 1
        self.commit_completion.record(1, now)


class ErrorMetrics:
    """``task-error-metrics``: bad records, retries, skips, the dead-letter queue."""

    def __init__(self) -> None:
        self.total_record_failures = 0
        self.total_record_errors = 0
        self.total_records_skipped = 0
        self.total_retries = 0
        self.total_errors_logged = 0
        self.deadletterqueue_produce_requests = 0
        self.deadletterqueue_produce_failures = 0
        self.last_error_timestamp_ms = 0

    def record_error(self) -> None:
        self.total_record_errors += 1
        self.last_error_timestamp_ms = int(time.time() * 1000)


class TaskMetrics:
    """One task's metrics (module doc); ``worker`` counts its start-ups too."""

    def __init__(self, task_id: TaskId, worker: WorkerMetrics) -> None:
        now = time.monotonic()
        self.task_id = task_id
        self.worker = worker
        self.window = worker.window
        self.state = State.UNASSIGNED
        self._state_since = now
        self._created = now
        self._time_in: dict[State, float] = {}
        self.batch_size = WindowedStat(self.window, now)
        self.offset_commit_time_ms = WindowedStat(self.window, now)
        self.offset_commit_outcome = WindowedStat(self.window, now)  # 1 success, 0 failure
        self.errors = ErrorMetrics()
        self.plugin = PluginMetrics(task_id.connector, task_id.task)
        self.source: SourceMetrics | None = None
        self.sink: SinkMetrics | None = None

    # -- task thread ---------------------------------------------------------------------

    def state_changed(self, state: State) -> None:
        now = time.monotonic()
        previous = self.state
        self._time_in[previous] = self._time_in.get(previous, 0.0) + now - self._state_since
        self.state, self._state_since = state, now

    def attempt_started(self) -> None:
        self.worker.count("task_startup_attempts_total")

    def attempt_running(self) -> None:
        self.worker.count("task_startup_success_total")

    def attempt_failed_to_start(self) -> None:
        self.worker.count("task_startup_failure_total")

    # -- runners -------------------------------------------------------------------------

    def source_metrics(self) -> SourceMetrics:
        if self.source is None:
            self.source = SourceMetrics(self.window, time.monotonic())
        return self.source

    def sink_metrics(self) -> SinkMetrics:
        if self.sink is None:
            self.sink = SinkMetrics(self.window, time.monotonic())
        return self.sink

    def record_offset_commit(self, took_s: float, ok: bool, now: float) -> None:
        self.offset_commit_time_ms.record(took_s * 1000, now)
        self.offset_commit_outcome.record(1.0 if ok else 0.0, now)

    # -- readers -------------------------------------------------------------------------

    def ratio_in(self, *states: State) -> float:
        """The fraction of this task's life spent in ``states``."""
        now = time.monotonic()
        total = now - self._created
        if total <= 0:
            return 0.0
        spent = sum(self._time_in.get(s, 0.0) for s in states)
        if self.state in states:
            spent += now - self._state_since
        return min(1.0, spent / total)


@dataclass
class WorkerMetrics:
    """The worker's counters and the metrics of the tasks it runs now."""

    window: SampleWindow = field(default_factory=SampleWindow)
    counters: dict[str, int] = field(default_factory=dict)
    rebalance: RebalanceMetrics | None = None
    """A distributed worker's ``connect-worker-rebalance-metrics`` (its herder sets it)."""
    _tasks: dict[TaskId, TaskMetrics] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, name: str) -> None:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + 1

    def connector_started(self, ok: bool) -> None:
        self.count("connector_startup_attempts_total")
        self.count("connector_startup_success_total" if ok else "connector_startup_failure_total")

    def task(self, task_id: TaskId) -> TaskMetrics:
        """A fresh metrics object for a task the worker starts (replacing an old one)."""
        metrics = TaskMetrics(task_id, self)
        with self._lock:
            self._tasks[task_id] = metrics
        return metrics

    def task_stopped(self, task_id: TaskId, metrics: TaskMetrics | None = None) -> None:
        with self._lock:
            if metrics is None or self._tasks.get(task_id) is metrics:
                self._tasks.pop(task_id, None)

    def tasks(self) -> list[TaskMetrics]:
        with self._lock:
            return [self._tasks[t] for t in sorted(self._tasks)]
