"""Windowed stats (Kafka's sample windows) and the plugin metrics handle's rules."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from connect_worker.log_context import (
    JsonLineFormatter,
    TaskContextFilter,
    connector_context,
    set_task_context,
)
from connect_worker.metrics.plugin_metrics import PluginMetrics
from connect_worker.metrics.stats import SampleWindow, WindowedStat
from connectors.api import SourceTask
from connectors.api.metrics import NO_METRICS


def test_windowed_stat_forgets_samples_older_than_the_windows() -> None:
    stat = WindowedStat(SampleWindow(window_s=10, num_samples=2), now=0.0)
    stat.record(100, now=1.0)
    stat.record(300, now=12.0)  # second window
    assert stat.avg(now=13.0) == 200 and stat.max(now=13.0) == 300
    assert stat.rate(now=13.0) == pytest.approx(400 / 13.0)
    stat.record(50, now=25.0)  # third window: the first is dropped
    assert stat.max(now=25.0) == 300 and stat.avg(now=25.0) == 175
    assert stat.avg(now=100.0) == 0 and stat.max(now=100.0) == 0 and stat.rate(now=100.0) == 0


def test_rate_covers_at_least_the_older_windows() -> None:
    """As Kafka's Rate: a burst right after start is not reported as a huge rate."""
    stat = WindowedStat(SampleWindow(window_s=30, num_samples=2), now=0.0)
    stat.record(3000, now=0.1)
    assert stat.rate(now=0.2) == pytest.approx(100.0)


def test_plugin_metrics_keep_series_per_label_values() -> None:
    metrics = PluginMetrics("c", 0)
    metrics.counter("rows_read", "rows", {"table": "a"}).inc(3)
    metrics.counter("rows_read", "rows", {"table": "b"}).inc()
    metrics.counter("rows_read", "rows", {"table": "a"}).inc(2)
    lag = metrics.gauge("lag_bytes", "lag")
    lag.set(10)
    lag.dec(4)
    (rows, lags) = metrics.families()
    assert rows.label_names == ("table",)
    assert {k: v.value for k, v in rows.series.items()} == {("a",): 5, ("b",): 1}
    assert lags.series[()].value == 6


def test_a_namespace_keeps_a_known_systems_names_apart_from_the_default() -> None:
    metrics = PluginMetrics("c", 0)
    metrics.gauge("rowsscanned", "rows", {"table": "a"}, namespace="debezium_metrics").set(4)
    metrics.gauge("rowsscanned", "rows")  # the same name in the default namespace: its own
    names = sorted(f.full_name for f in metrics.families())
    assert names == ["debezium_metrics_rowsscanned", "sluice_plugin_rowsscanned"]


@pytest.mark.parametrize(
    ("register", "words"),
    [
        (lambda m: m.counter("Bad-Name", "x"), "lower case"),
        (lambda m: m.counter("ok", "x", {"connector": "y"}), "connector"),
        (lambda m: (m.counter("twice", "x"), m.gauge("twice", "x")), "already a counter"),
        (lambda m: (m.counter("t", "x"), m.counter("t", "x", {"a": "1"})), "labels"),
        (lambda m: m.counter("up", "x").inc(-1), "only goes up"),
        (lambda m: m.gauge("g", "x", namespace="kafka_connect"), "namespace"),
        (lambda m: m.gauge("g", "x", namespace="sluice_worker"), "namespace"),
        (lambda m: m.gauge("g", "x", namespace="Debezium"), "namespace"),
    ],
)
def test_plugin_metrics_refuse_what_prometheus_could_not_render(register, words) -> None:
    with pytest.raises(ValueError, match=words):
        register(PluginMetrics("c", 0))


def test_a_task_without_a_metrics_context_gets_a_no_op_handle() -> None:
    class Task(SourceTask):
        def start(self, props):  # type: ignore[no-untyped-def]
            pass

        def poll(self):  # type: ignore[no-untyped-def]
            return []

        def stop(self) -> None:
            pass

    task = Task()
    assert task.metrics is NO_METRICS
    task.metrics.counter("anything", "x").inc(5)  # records nothing, raises nothing


def test_json_lines_name_the_task_of_the_thread_that_logged() -> None:
    record = logging.LogRecord("connectors.x", logging.INFO, __file__, 1, "hi %s", ("there",), None)
    done = threading.Thread(target=lambda: (set_task_context("pipe", 2),
                                            TaskContextFilter().filter(record)))
    done.start()
    done.join()
    line = json.loads(JsonLineFormatter().format(record))
    assert line["message"] == "hi there" and line["connector"] == "pipe" and line["task"] == 2
    assert line["level"] == "INFO" and line["logger"] == "connectors.x"
    assert record.connector_context == "[pipe|task-2] "


def test_lines_a_connector_logs_name_it() -> None:
    record = logging.LogRecord("connectors.x", logging.INFO, __file__, 1, "planned", (), None)
    with connector_context("pipe"):
        TaskContextFilter().filter(record)
    assert record.connector == "pipe" and record.task is None
    assert record.connector_context == "[pipe|worker] "
    after = logging.LogRecord("connectors.x", logging.INFO, __file__, 1, "later", (), None)
    TaskContextFilter().filter(after)
    assert after.connector is None and after.connector_context == ""
