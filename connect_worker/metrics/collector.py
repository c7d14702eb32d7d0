"""``GET /metrics``: the worker's metrics under the names Prometheus users know.

Naming scheme: as the Prometheus JMX exporter renders Kafka Connect's MBeans
with its default (rule-less, ``lowercaseOutputName``) rendering:
``kafka.connect:type=<group>,connector=C,task=T`` attribute ``<name>`` becomes
``kafka_connect_<group>_<name>{connector="C",task="T"}`` with ``-`` turned
into ``_``. So ``source-task-metrics`` ``source-record-poll-total`` is
``kafka_connect_source_task_metrics_source_record_poll_total``. The full
mapping, with the Strimzi rule names beside it, is in ``docs/metrics.md``.

String attributes (status, connector class), which the JMX exporter cannot
render as numbers, become one series of value 1 with the string as a label
(``kafka_connect_connector_task_metrics_status{...,status="running"} 1``), as
the common exporter rules do. Counters (names ending ``_total``) are typed
counter, everything else gauge. A sink task's consumer lag per partition
follows the Kafka consumer's own MBean:
``kafka_consumer_consumer_fetch_manager_metrics_records_lag{client_id,topic,partition}``
(with ``connector`` and ``task`` added). Plugins' own metrics are
``sluice_plugin_<name>``, or ``<namespace>_<name>`` for a plugin keeping a
known system's names (``debezium_metrics_*``; :mod:`connectors.api.metrics`).

Everything is read at scrape time from :class:`WorkerMetrics` and the
herder's statuses; nothing here runs on the data path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from connect_worker.herder.api import ConnectorStatus, Herder, HerderError
from connect_worker.metrics.task_metrics import TaskMetrics, WorkerMetrics
from connect_worker.states import State

log = logging.getLogger(__name__)

WORKER = "kafka_connect_connect_worker_metrics_"
CONNECTOR = "kafka_connect_connector_metrics_"
TASK = "kafka_connect_connector_task_metrics_"
SOURCE = "kafka_connect_source_task_metrics_"
SINK = "kafka_connect_sink_task_metrics_"
ERRORS = "kafka_connect_task_error_metrics_"
CONSUMER_LAG = "kafka_consumer_consumer_fetch_manager_metrics_records_lag"

TASK_LABELS = ["connector", "task"]
#: connect-worker-metrics,connector=C: tasks of C in each state.
TASK_STATE_COUNTS = {
    "connector_total_task_count": None,
    "connector_running_task_count": State.RUNNING,
    "connector_paused_task_count": State.PAUSED,
    "connector_failed_task_count": State.FAILED,
    "connector_unassigned_task_count": State.UNASSIGNED,
    "connector_restarting_task_count": State.RESTARTING,
}


class _Families:
    """Families by name, created on first use, so each name is emitted once."""

    def __init__(self) -> None:
        self._by_name: dict[str, Metric] = {}

    def add(self, name: str, doc: str, labels: list[str], values: list[str], value: float) -> None:
        family = self._by_name.get(name)
        if family is None:
            cls = CounterMetricFamily if name.endswith("_total") else GaugeMetricFamily
            family = self._by_name[name] = cls(name, doc, labels=labels)
        family.add_metric(values, value)  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._by_name.values())


class WorkerCollector(Collector):
    """Renders one worker's metrics (module doc); registered in :func:`metrics_registry`."""

    def __init__(self, herder: Herder, metrics: WorkerMetrics) -> None:
        self._herder = herder
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        out = _Families()
        statuses = self._statuses()
        tasks = self._metrics.tasks()
        self._worker(out, statuses, tasks)
        for status in statuses:
            self._connector(out, status)
        now = time.monotonic()
        for task in tasks:
            self._task(out, task, now)
        return out

    def _statuses(self) -> list[ConnectorStatus]:
        """This worker's connectors' statuses (a connector deleted meanwhile is skipped)."""
        me = self._herder.worker_id()
        statuses = []
        for name in self._herder.connectors():
            try:
                status = self._herder.connector_status(name)
            except HerderError:
                continue
            if status.worker_id == me:
                statuses.append(status)
        return statuses

    def _worker(
        self, out: _Families, statuses: list[ConnectorStatus], tasks: list[TaskMetrics]
    ) -> None:
        running = [s for s in statuses if s.state is not State.STOPPED]
        out.add(WORKER + "connector_count", "Connectors run in this worker.", [], [], len(running))
        out.add(WORKER + "task_count", "Tasks run in this worker.", [], [], len(tasks))
        counters = dict(self._metrics.counters)
        for what in ("connector", "task"):
            attempts = counters.get(f"{what}_startup_attempts_total", 0)
            for outcome in ("success", "failure"):
                done = counters.get(f"{what}_startup_{outcome}_total", 0)
                out.add(
                    f"{WORKER}{what}_startup_{outcome}_total",
                    f"{what.capitalize()} starts that ended in {outcome}.", [], [], done,
                )
                out.add(
                    f"{WORKER}{what}_startup_{outcome}_percentage",
                    f"Share of {what} start attempts that ended in {outcome} (0-1, as Kafka's).",
                    [], [], done / attempts if attempts else 0.0,
                )
            out.add(
                f"{WORKER}{what}_startup_attempts_total",
                f"{what.capitalize()} start attempts.", [], [], attempts,
            )
        if self._metrics.rebalance is not None:
            self._metrics.rebalance.render(out, time.monotonic())
        me = self._herder.worker_id()
        for status in running:
            mine = [t for t in status.tasks if t.worker_id == me]
            for name, state in TASK_STATE_COUNTS.items():
                count = sum(1 for t in mine if state is None or t.state is state)
                out.add(
                    WORKER + name, f"Tasks of the connector ({name}).",
                    ["connector"], [status.name], count,
                )

    def _connector(self, out: _Families, status: ConnectorStatus) -> None:
        out.add(
            CONNECTOR + "status", "The connector's state (value 1, state in the label).",
            ["connector", "status"], [status.name, status.state.value.lower()], 1,
        )
        try:
            connector_class = self._herder.connector_config(status.name).get("connector.class", "")
        except HerderError:
            connector_class = ""
        out.add(
            CONNECTOR + "info", "The connector's type and class (value 1).",
            ["connector", "connector_type", "connector_class"],
            [status.name, status.type.value, connector_class], 1,
        )

    def _task(self, out: _Families, task: TaskMetrics, now: float) -> None:
        labels = [task.task_id.connector, str(task.task_id.task)]
        out.add(
            TASK + "status", "The task's state (value 1, state in the label).",
            [*TASK_LABELS, "status"], [*labels, task.state.value.lower()], 1,
        )
        out.add(TASK + "running_ratio", "Fraction of time spent running.", TASK_LABELS,
                labels, task.ratio_in(State.RUNNING))
        out.add(TASK + "pause_ratio", "Fraction of time spent paused.", TASK_LABELS,
                labels, task.ratio_in(State.PAUSED))
        out.add(TASK + "batch_size_avg", "Average records per batch.", TASK_LABELS,
                labels, task.batch_size.avg(now))
        out.add(TASK + "batch_size_max", "Largest batch (records).", TASK_LABELS,
                labels, task.batch_size.max(now))
        out.add(TASK + "offset_commit_avg_time_ms", "Average offset commit time (ms).",
                TASK_LABELS, labels, task.offset_commit_time_ms.avg(now))
        out.add(TASK + "offset_commit_max_time_ms", "Longest offset commit (ms).",
                TASK_LABELS, labels, task.offset_commit_time_ms.max(now))
        outcome = task.offset_commit_outcome
        tried = outcome._live(now)
        tried_any = any(s.count for s in tried)
        success = outcome.avg(now) if tried_any else 0.0
        failure = 1.0 - success if tried_any else 0.0
        out.add(TASK + "offset_commit_success_percentage",
                "Share of offset commits that succeeded (0-1, as Kafka's).",
                TASK_LABELS, labels, success)
        out.add(TASK + "offset_commit_failure_percentage",
                "Share of offset commits that failed (0-1, as Kafka's).",
                TASK_LABELS, labels, failure)
        if task.source is not None:
            self._source(out, task, labels, now)
        if task.sink is not None:
            self._sink(out, task, labels, now)
        self._errors(out, task, labels)
        self._plugin(out, task, labels)

    def _source(self, out: _Families, task: TaskMetrics, labels: list[str], now: float) -> None:
        source = task.source
        assert source is not None
        out.add(SOURCE + "source_record_poll_total", "Records polled from the task.",
                TASK_LABELS, labels, source.poll_total)
        out.add(SOURCE + "source_record_poll_rate", "Records polled per second.",
                TASK_LABELS, labels, source.poll.rate(now))
        out.add(SOURCE + "source_record_write_total",
                "Records output by the transforms and handed to the producer.",
                TASK_LABELS, labels, source.write_total)
        out.add(SOURCE + "source_record_write_rate", "Records written per second.",
                TASK_LABELS, labels, source.write.rate(now))
        out.add(SOURCE + "poll_batch_avg_time_ms", "Average poll() time (ms).",
                TASK_LABELS, labels, source.poll_time_ms.avg(now))
        out.add(SOURCE + "poll_batch_max_time_ms", "Longest poll() (ms).",
                TASK_LABELS, labels, source.poll_time_ms.max(now))
        out.add(SOURCE + "source_record_active_count",
                "Records handed to the producer and not yet acknowledged.",
                TASK_LABELS, labels, source.live_active_count())

    def _sink(self, out: _Families, task: TaskMetrics, labels: list[str], now: float) -> None:
        sink = task.sink
        assert sink is not None
        out.add(SINK + "sink_record_read_total", "Records read from the log.",
                TASK_LABELS, labels, sink.read_total)
        out.add(SINK + "sink_record_read_rate", "Records read per second.",
                TASK_LABELS, labels, sink.read.rate(now))
        out.add(SINK + "sink_record_send_total",
                "Records output by the transforms and handed to put().",
                TASK_LABELS, labels, sink.send_total)
        out.add(SINK + "sink_record_send_rate", "Records handed to put() per second.",
                TASK_LABELS, labels, sink.send.rate(now))
        out.add(SINK + "put_batch_avg_time_ms", "Average put() time (ms).",
                TASK_LABELS, labels, sink.put_time_ms.avg(now))
        out.add(SINK + "put_batch_max_time_ms", "Longest put() (ms).",
                TASK_LABELS, labels, sink.put_time_ms.max(now))
        out.add(SINK + "offset_commit_completion_total", "Offset commits that completed.",
                TASK_LABELS, labels, sink.commit_completion_total)
        out.add(SINK + "offset_commit_completion_rate", "Offset commits completed per second.",
                TASK_LABELS, labels, sink.commit_completion.rate(now))
        out.add(SINK + "offset_commit_seq_no", "Sequence number of the last offset commit.",
                TASK_LABELS, labels, sink.commit_completion_total)
        out.add(SINK + "partition_count", "Partitions assigned to the task.",
                TASK_LABELS, labels, sink.live_partition_count())
        lags = sink.live_lags()
        out.add(SINK + "sink_record_lag_max",
                "Largest lag (records) of the task's partitions behind the log end.",
                TASK_LABELS, labels, max((lag.lag for lag in lags), default=0))
        for lag in lags:
            out.add(
                CONSUMER_LAG,
                "Records between the consumer's position and the partition's log end.",
                ["client_id", "topic", "partition", *TASK_LABELS],
                [sink.client_id, lag.topic, str(lag.partition), *labels], lag.lag,
            )

    def _errors(self, out: _Families, task: TaskMetrics, labels: list[str]) -> None:
        errors = task.errors
        for name, doc, value in (
            ("total_record_failures", "Failed attempts to process a record.",
             errors.total_record_failures),
            ("total_record_errors", "Records that failed for good.", errors.total_record_errors),
            ("total_records_skipped", "Records skipped (errors.tolerance=all).",
             errors.total_records_skipped),
            ("total_retries", "Retries of a record's processing.", errors.total_retries),
            ("total_errors_logged", "Errors written to the log.", errors.total_errors_logged),
            ("deadletterqueue_produce_requests", "Writes to the dead-letter topic.",
             errors.deadletterqueue_produce_requests),
            ("deadletterqueue_produce_failures", "Failed writes to the dead-letter topic.",
             errors.deadletterqueue_produce_failures),
            ("last_error_timestamp", "When the last error happened (ms since the epoch).",
             errors.last_error_timestamp_ms),
        ):
            out.add(ERRORS + name, doc, TASK_LABELS, labels, value)

    def _plugin(self, out: _Families, task: TaskMetrics, labels: list[str]) -> None:
        for family in task.plugin.families():
            name = family.full_name
            if family.kind == "counter" and not name.endswith("_total"):
                name += "_total"
            for values, value in list(family.series.items()):
                out.add(
                    name, family.description or family.name,
                    [*TASK_LABELS, *family.label_names], [*labels, *values], value.value,
                )


def metrics_registry(herder: Herder, metrics: WorkerMetrics) -> CollectorRegistry:
    """The worker's metrics plus the Python process's (CPU, memory, GC)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WorkerCollector(herder, metrics))
    for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(collector)
    return registry


def render(registry: CollectorRegistry) -> tuple[bytes, str]:
    """The Prometheus text exposition of ``registry`` and its content type."""
    return generate_latest(registry), CONTENT_TYPE_LATEST
