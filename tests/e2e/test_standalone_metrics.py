"""Metrics, health and log levels of a running ``sluice standalone`` (issue 20).

Real worker processes (embedded broker, or an external one killed for real),
a file pipeline, and what an operator reads: ``GET /metrics`` parsed with
prometheus_client's own parser, ``GET /health``, ``/admin/loggers`` and the
worker's log lines.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.broker_process import BrokerProcess
from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    properties,
    read_lines,
    wait_for_rest,
)

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(worker: StandaloneProcess) -> Samples:
    """Every sample of ``GET /metrics``, parsed as Prometheus parses it."""
    response = worker.http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def task_value(worker: StandaloneProcess, name: str, connector: str) -> float | None:
    return value(scrape(worker), name, connector=connector, task="0")


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines))


def test_metrics_count_the_records_a_file_pipeline_moves(
    worker: StandaloneProcess, tmp_path: Path
) -> None:
    count = 700
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    write_lines(source, [f"record {i}" for i in range(count)])
    worker.write_pipeline("m-src", file_source("m-src", source, "metrics-moved"))
    worker.write_pipeline("m-snk", file_sink("m-snk", output, "metrics-moved"))
    wait_for_rest(lambda: len(read_lines(output)) == count, f"{count} lines in {output}")

    def settled() -> Samples | None:
        samples = scrape(worker)
        sink = value(samples, "kafka_connect_sink_task_metrics_sink_record_send_total",
                     connector="m-snk", task="0")
        return samples if sink == count else None

    samples = wait_for_rest(settled, "the sink's send total to reach the records moved")
    src, snk = {"connector": "m-src", "task": "0"}, {"connector": "m-snk", "task": "0"}
    assert value(samples, "kafka_connect_source_task_metrics_source_record_poll_total", **src) \
        == count
    assert value(samples, "kafka_connect_source_task_metrics_source_record_write_total", **src) \
        == count
    assert value(samples, "kafka_connect_sink_task_metrics_sink_record_read_total", **snk) \
        == count
    # the connectors' own metrics, registered through the plugin API
    assert value(samples, "sluice_plugin_file_lines_read_total", **src) == count
    assert value(samples, "sluice_plugin_file_lines_written_total", **snk) == count
    for labels in (src, snk):
        assert value(samples, "kafka_connect_connector_task_metrics_status",
                     **labels, status="running") == 1
        assert value(samples, "kafka_connect_task_error_metrics_total_record_errors",
                     **labels) == 0
    assert value(samples, "kafka_connect_connector_metrics_status",
                 connector="m-src", status="running") == 1
    assert value(samples, "kafka_connect_connector_metrics_info", connector="m-src",
                 connector_type="source", connector_class="FileStreamSource") == 1
    assert value(samples, "kafka_connect_connect_worker_metrics_connector_running_task_count",
                 connector="m-snk") == 1
    assert (value(samples, "kafka_connect_connect_worker_metrics_connector_count") or 0) >= 2
    assert (value(samples, "kafka_connect_connect_worker_metrics_task_startup_success_total")
            or 0) >= 2
    assert (value(samples, "kafka_connect_source_task_metrics_source_record_poll_rate",
                  **src) or 0) > 0
    assert value(samples, "kafka_connect_sink_task_metrics_partition_count", **snk) == 1
    lag = {"client_id": "connector-consumer-m-snk-0", "topic": "metrics-moved",
           "partition": "0", **snk}
    assert value(samples, "kafka_consumer_consumer_fetch_manager_metrics_records_lag",
                 **lag) == 0


def test_a_failing_record_moves_the_error_metrics(
    worker: StandaloneProcess, tmp_path: Path
) -> None:
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    write_lines(source, ['{"n": 1}', "not json", '{"n": 3}'])
    worker.write_pipeline("e-src", file_source("e-src", source, "metrics-errors"))
    worker.write_pipeline("e-snk", properties(
        name="e-snk", connector_class="FileStreamSink", file=str(output), topics="metrics-errors",
        value_converter="org.apache.kafka.connect.json.JsonConverter",
        value_converter_schemas_enable="false", errors_tolerance="all",
        errors_deadletterqueue_topic_name="metrics-errors-dlq",
    ))
    wait_for_rest(lambda: len(read_lines(output)) == 2, f"the two good lines in {output}")
    wait_for_rest(
        lambda: task_value(worker, "kafka_connect_task_error_metrics_total_records_skipped",
                           "e-snk") == 1,
        "the bad record counted as skipped",
    )
    samples = scrape(worker)
    snk = {"connector": "e-snk", "task": "0"}
    assert value(samples, "kafka_connect_task_error_metrics_total_record_errors", **snk) == 1
    assert (value(samples, "kafka_connect_task_error_metrics_total_record_failures",
                  **snk) or 0) >= 1
    assert value(samples, "kafka_connect_task_error_metrics_deadletterqueue_produce_requests",
                 **snk) == 1
    assert value(samples, "kafka_connect_task_error_metrics_deadletterqueue_produce_failures",
                 **snk) == 0
    assert (value(samples, "kafka_connect_task_error_metrics_last_error_timestamp",
                  **snk) or 0) > 0
    assert value(samples, "kafka_connect_sink_task_metrics_sink_record_read_total", **snk) == 3
    assert value(samples, "kafka_connect_sink_task_metrics_sink_record_send_total", **snk) == 2
    # the source side saw nothing wrong
    assert value(samples, "kafka_connect_task_error_metrics_total_record_errors",
                 connector="e-src", task="0") == 0


def test_a_task_failing_on_a_record_shows_failed_and_keeps_counting_across_restarts(
    worker: StandaloneProcess, tmp_path: Path
) -> None:
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    write_lines(source, ["not json"])
    worker.write_pipeline("f-src", file_source("f-src", source, "metrics-failing"))
    sink_file = worker.write_pipeline("f-snk", properties(
        name="f-snk", connector_class="FileStreamSink", file=str(output), topics="metrics-failing",
        value_converter="org.apache.kafka.connect.json.JsonConverter",
        value_converter_schemas_enable="false",  # errors.tolerance=none: the task fails
    ))
    failed = {"connector": "f-snk", "task": "0", "status": "failed"}
    wait_for_rest(
        lambda: value(scrape(worker), "kafka_connect_connector_task_metrics_status", **failed),
        "the sink task's status metric to say failed",
    )
    wait_for_rest(
        lambda: (task_value(worker, "kafka_connect_task_error_metrics_total_record_errors",
                            "f-snk") or 0) >= 2,
        "the same bad record counted again after the automatic restart",
    )
    samples = scrape(worker)
    assert value(samples, "kafka_connect_connect_worker_metrics_connector_total_task_count",
                 connector="f-snk") == 1
    assert value(samples, "kafka_connect_task_error_metrics_total_records_skipped",
                 connector="f-snk", task="0") == 0
    sink_file.unlink()  # the task would go on failing for the rest of the module
    wait_for_rest(lambda: worker.status("f-snk") is None, "f-snk removed")


def test_a_logger_level_put_at_run_time_brings_debug_lines(
    worker: StandaloneProcess, tmp_path: Path
) -> None:
    http = worker.http
    source = tmp_path / "in.txt"
    write_lines(source, ["before"])
    worker.write_pipeline("l-src", file_source("l-src", source, "metrics-loggers"))
    worker.wait_running("l-src")
    debug_line = f"DEBUG connectors.file.source: [l-src|task-0] read 6 bytes of {source}"
    assert debug_line not in worker.log_text()

    response = http.put("/admin/loggers/connectors.file", json={"level": "DEBUG"})
    assert response.status_code == 200, response.text
    assert "connectors.file.source" in response.json()
    assert http.get("/admin/loggers/connectors.file.source").json()["level"] == "DEBUG"
    assert http.get("/admin/loggers").json()["connectors.file"]["level"] == "DEBUG"
    with source.open("a") as out:
        out.write("after\n")
    wait_for_rest(lambda: debug_line in worker.log_text(), f"{debug_line!r} in the worker log")

    response = http.put("/admin/loggers/connectors.file", json={"level": "INFO"})
    assert response.status_code == 200 and "connectors.file.source" in response.json()
    bad = http.put("/admin/loggers/connectors.file", json={"level": "LOUD"})
    assert bad.status_code == 404 and "LOUD" in bad.json()["message"]


def test_json_log_lines_carry_the_connector_and_task(tmp_path: Path) -> None:
    process = StandaloneProcess(tmp_path, **{"log.format": "json", "metrics.enabled": "false"})
    source = tmp_path / "in.txt"
    write_lines(source, ["one", "two"])
    try:
        process.start()
        process.write_pipeline("j-src", file_source("j-src", source, "json-logs"))
        process.wait_running("j-src")
        missing = process.http.get("/metrics")
        assert missing.status_code == 404 and "metrics.enabled" in missing.json()["message"]

        def task_lines() -> list[dict[str, object]]:
            lines = [json.loads(line) for line in process.log_text().splitlines() if line]
            return [line for line in lines if line.get("connector") == "j-src"
                    and line.get("task") == 0]

        lines = wait_for_rest(task_lines, "a log line of task j-src-0")
    finally:
        code = process.stop()
        process.close()
    assert code == 0, process.log_text()
    reading = [line for line in lines if str(line["message"]).startswith("reading ")]
    assert reading and reading[0]["logger"] == "connectors.file.source", lines
    assert {"timestamp", "level", "logger", "thread", "message"} <= set(reading[0])
    every = [json.loads(line) for line in process.log_text().splitlines() if line]
    assert any(line.get("connector") is None for line in every)  # the worker's own lines


@pytest.fixture
def external_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path / "broker").start()
    yield broker
    broker.stop()


def test_health_answers_503_while_the_cluster_is_unreachable(
    external_broker: BrokerProcess, tmp_path: Path
) -> None:
    worker = StandaloneProcess(
        tmp_path / "worker", **{"bootstrap.servers": external_broker.bootstrap}
    )
    try:
        worker.start()
        healthy = worker.http.get("/health")
        assert healthy.status_code == 200 and healthy.json()["status"] == "healthy"

        external_broker.stop(signal.SIGKILL)
        unhealthy = wait_for_rest(
            lambda: (r := worker.http.get("/health")).status_code == 503 and r,
            "/health to answer 503 once the broker is killed",
        )
        assert unhealthy.json()["status"] == "unhealthy"
        assert external_broker.bootstrap in unhealthy.json()["message"]

        external_broker.start()  # same port: the worker sees its cluster again
        wait_for_rest(lambda: worker.http.get("/health").status_code == 200,
                      "/health to answer 200 again once the broker is back")
    finally:
        worker.stop()
        worker.close()


def test_health_answers_503_while_the_worker_starts(tmp_path: Path) -> None:
    """A plugin that takes long to import holds the start-up; REST says so meanwhile."""
    plugins, release = tmp_path / "plugins", tmp_path / "release"
    plugins.mkdir()
    (plugins / "slow_plugin.py").write_text(
        "import pathlib, time\n"
        f"release = pathlib.Path({str(release)!r})\n"
        "deadline = time.monotonic() + 120\n"
        "while not release.exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
    )
    worker = StandaloneProcess(tmp_path / "worker", **{"plugin.path": str(plugins)})
    try:
        worker.launch()
        starting = wait_for_rest(lambda: worker.http.get("/health"), "/health to answer")
        assert starting.status_code == 503, starting.text
        assert starting.json()["status"] == "starting"
        busy = worker.http.get("/connectors")
        assert busy.status_code == 503 and "starting" in busy.json()["message"]
        release.touch()
        wait_for_rest(lambda: worker.http.get("/health").status_code == 200,
                      "/health to answer 200 once started")
        assert worker.http.get("/connectors").status_code == 200
    finally:
        release.touch()
        code = worker.stop()
        worker.close()
    assert code == 0, worker.log_text()
