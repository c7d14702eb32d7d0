"""Metrics a plugin task registers for itself: counters and gauges.

A task reaches its handle as ``self.metrics`` (the runtime's, through the
task context; a no-op one when the context has none, e.g. in a plugin's own
unit tests)::

    def start(self, props):
        self._rows = self.metrics.counter("jdbc_rows_read", "Rows read from the table")
        self._lag = self.metrics.gauge("cdc_wal_lag_bytes", "Bytes behind the WAL")

    def poll(self):
        ...
        self._rows.inc(len(rows))        # once per batch, not per record

The worker serves them on ``GET /metrics`` as ``sluice_plugin_<name>`` (a
counter with ``_total`` appended), labelled with the task's ``connector`` and
``task``, plus any ``labels`` given at registration (e.g. ``{"table": t}``:
one series per distinct label values). Names are ``[a-z_][a-z0-9_]*``; the
same name with another kind or other label names is a ValueError. Updates
are cheap (an addition) and thread-safe enough for one writer thread.

A plugin that stands in for a well-known one may keep that one's names, so
existing dashboards work: ``namespace`` replaces ``sluice_plugin``
(``gauge("millisecondsbehindsource", ..., namespace="debezium_metrics")`` is
``debezium_metrics_millisecondsbehindsource``, as the JMX exporter renders
Debezium's MBean attribute). Namespaces of the worker's own metrics
(``kafka_*``, ``sluice_*`` but ``sluice_plugin``, ``process_*``,
``python_*``) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

#: What a plugin metric's name is prefixed with unless it asks for another namespace.
DEFAULT_NAMESPACE = "sluice_plugin"


class Counter(Protocol):
    """A value that only goes up (records read, bytes written)."""

    def inc(self, amount: float = 1.0) -> None: ...


class Gauge(Protocol):
    """A value that goes up and down (a lag, a connection state as 0/1)."""

    def set(self, value: float) -> None: ...

    def inc(self, amount: float = 1.0) -> None: ...

    def dec(self, amount: float = 1.0) -> None: ...


class TaskMetrics(Protocol):
    """Registers a task's own metrics (see the module doc)."""

    def counter(
        self,
        name: str,
        description: str,
        labels: Mapping[str, str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> Counter: ...

    def gauge(
        self,
        name: str,
        description: str,
        labels: Mapping[str, str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> Gauge: ...


class _NoOp:
    def inc(self, amount: float = 1.0) -> None:
        pass

    def dec(self, amount: float = 1.0) -> None:
        pass

    def set(self, value: float) -> None:
        pass


class _NoMetrics:
    """What ``task.metrics`` is when the context has no metrics: records nothing."""

    def counter(
        self,
        name: str,
        description: str,
        labels: Mapping[str, str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> Counter:
        return _NoOp()

    def gauge(
        self,
        name: str,
        description: str,
        labels: Mapping[str, str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> Gauge:
        return _NoOp()


NO_METRICS: TaskMetrics = _NoMetrics()
