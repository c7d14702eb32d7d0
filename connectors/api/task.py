"""What source and sink tasks share: the runtime's context and the task's base class.

:class:`TaskContext` is the part of a task's context both sides have (its
number, the worker's cluster, its metrics); ``SourceTaskContext`` and
``SinkTaskContext`` add their own. :class:`Task` holds the context the runtime
hands over in ``initialize`` and gives every task ``metrics`` and ``details``.
"""

from __future__ import annotations

from abc import ABC
from typing import Any, Generic, Protocol, TypeVar

from connectors.api.metrics import NO_METRICS, TaskMetrics


class TaskContext(Protocol):
    """What any task may ask of the runtime."""

    @property
    def task_id(self) -> int: ...

    @property
    def bootstrap_servers(self) -> str:
        """The worker's Kafka cluster (``host:port,...``), embedded broker or not.

        A plugin that reads or writes the log itself (SparkSink's query) uses it
        unless its config names another cluster.
        """
        ...

    @property
    def metrics(self) -> TaskMetrics:
        """Where the task registers its own metrics (:mod:`connectors.api.metrics`)."""
        ...


ContextT = TypeVar("ContextT", bound=TaskContext)


class Task(ABC, Generic[ContextT]):
    """The base of :class:`SourceTask` and :class:`SinkTask`: context, metrics, details."""

    def __init__(self) -> None:
        self.context: ContextT | None = None

    def initialize(self, context: ContextT) -> None:
        self.context = context

    @property
    def metrics(self) -> TaskMetrics:
        """The task's own metrics (:mod:`connectors.api.metrics`); no-op without a context."""
        return getattr(self.context, "metrics", None) or NO_METRICS

    def details(self) -> dict[str, Any]:
        """Progress for ``tasks[i].details`` in the status (JSON-serialisable; thread-safe)."""
        return {}
