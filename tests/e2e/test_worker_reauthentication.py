"""A Sluice worker keeps a pipeline running through a broker whose SASL
sessions last 2 s (``connections.max.reauth.ms=2000``, KIP-368).

The worker's clients (the tasks' producer and consumer, the admin client, the
health probe) re-authenticate on their connections before their sessions end,
so lines written to the source file over several session lifetimes all reach
the sink's file, no connection is closed for an expired session and no task
fails.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from harness.broker_process import free_port
from harness.secured_broker import sasl_ssl_broker, sasl_ssl_client_props
from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for_rest,
)
from harness.tls_certs import TestCA

PASSWORD = "reauth-worker-secret"
REAUTHENTICATIONS = "kafka_server_socket_server_metrics_successful_reauthentication_total"
RUN_S = 7.0  # more than three session lifetimes


def _reauthentications(metrics_url: str) -> float:
    with urllib.request.urlopen(metrics_url, timeout=10) as answer:
        text = answer.read().decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == REAUTHENTICATIONS:
                return float(sample.value)
    raise AssertionError("no successful_reauthentication counter in /metrics")


def test_a_pipeline_keeps_running_across_reauthentications(tmp_path: Path) -> None:
    ca = TestCA(tmp_path / "ca")
    (tmp_path / "broker").mkdir()
    broker = sasl_ssl_broker(tmp_path / "broker" / "data", ca, "connect", PASSWORD)
    metrics_port = free_port()
    broker.overrides["connections.max.reauth.ms"] = "2000"
    broker.overrides["metrics.listeners"] = f"http://127.0.0.1:{metrics_port}"
    broker.start()
    worker = StandaloneProcess(
        tmp_path / "worker",
        **{
            "bootstrap.servers": broker.bootstrap,
            **sasl_ssl_client_props(ca, "connect", PASSWORD),
            "task.restart.enabled": "false",
        },
    ).start()
    try:
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("line 0\n")
        worker.write_pipeline("src", file_source("src", source, "renewed-lines"))
        worker.write_pipeline("snk", file_sink("snk", sink, "renewed-lines"))
        wait_for_rest(lambda: len(read_lines(sink)) == 1, "the first line through SASL_SSL")
        written = 1
        deadline = time.monotonic() + RUN_S
        while time.monotonic() < deadline:
            with source.open("a") as f:
                f.write(f"line {written}\n")
            written += 1
            time.sleep(0.2)
        wait_for_rest(lambda: len(read_lines(sink)) == written, "every line through SASL_SSL")
        assert read_lines(sink) == [f"line {i}" for i in range(written)]
        assert worker.state("src") == "RUNNING" and worker.state("snk") == "RUNNING"
        assert _reauthentications(f"http://127.0.0.1:{metrics_port}/metrics") >= 2
        assert "SASL session of User:connect expired" not in broker.log_text()
    finally:
        code = worker.stop()
        worker.close()
        assert broker.stop() == 0, broker.log_text()
    assert code == 0, worker.log_text()
    assert PASSWORD not in worker.log_text()
