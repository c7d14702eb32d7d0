"""What a sink task may ask of its runner: assignment, pause/resume, seeks, commits.

The context only records requests; the runner applies them in its own thread
between polls (a task calls these from ``put``/``open``, i.e. from that same
thread, but nothing breaks if another thread does).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from connectors.api import TopicPartition
from connectors.api.metrics import NO_METRICS, TaskMetrics
from log_engine.client import TopicPartition as LogPartition


def to_log(tp: TopicPartition) -> LogPartition:
    return LogPartition(tp.topic, tp.partition)


def to_api(tp: LogPartition) -> TopicPartition:
    return TopicPartition(tp.topic, tp.partition)


class RunnerSinkContext:
    """The :class:`connectors.api.SinkTaskContext` the runner hands its task."""

    def __init__(
        self, task_id: int, bootstrap_servers: str, metrics: TaskMetrics = NO_METRICS
    ) -> None:
        self._task_id = task_id
        self._metrics = metrics
        self._bootstrap_servers = bootstrap_servers
        self._lock = threading.Lock()
        self._assignment: frozenset[LogPartition] = frozenset()
        self._paused: set[LogPartition] = set()
        self._seeks: dict[LogPartition, int] = {}
        self._commit_requested = False

    @property
    def task_id(self) -> int:
        return self._task_id

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap_servers

    @property
    def metrics(self) -> TaskMetrics:
        return self._metrics

    def assignment(self) -> set[TopicPartition]:
        return {to_api(tp) for tp in self._assignment}

    def pause(self, *partitions: TopicPartition) -> None:
        with self._lock:
            self._paused.update(to_log(tp) for tp in partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        with self._lock:
            self._paused.difference_update(to_log(tp) for tp in partitions)

    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        with self._lock:
            self._seeks.update({to_log(tp): int(o) for tp, o in offsets.items()})

    def request_commit(self) -> None:
        self._commit_requested = True

    # -- for the runner ------------------------------------------------------------------

    def set_assignment(self, partitions: frozenset[LogPartition]) -> None:
        self._assignment = partitions

    def paused_by_task(self) -> set[LogPartition]:
        with self._lock:
            return set(self._paused)

    def has_seeks(self) -> bool:
        return bool(self._seeks)

    def take_seeks(self, assigned: frozenset[LogPartition]) -> dict[LogPartition, int]:
        """Seeks for assigned partitions (others wait until they are assigned)."""
        with self._lock:
            ready = {tp: o for tp, o in self._seeks.items() if tp in assigned}
            for tp in ready:
                del self._seeks[tp]
            return ready

    def take_commit_request(self) -> bool:
        requested, self._commit_requested = self._commit_requested, False
        return requested
