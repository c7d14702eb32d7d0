"""A Sluice worker with SASL_SSL to a secured broker, running a pipeline end to end (issue 19).

A broker process listens on SASL_SSL only (SCRAM-SHA-512 and PLAIN, a
throwaway CA). ``sluice standalone`` points ``bootstrap.servers`` at it with
the worker-level client keys as a Kafka Connect user writes them (Java's
``ssl.truststore.location``, ``sasl.jaas.config``): its health probe, the
tasks' producer and consumer and the admin client that creates topics all log
in; lines written to a file come out of the sink's file. A wrong password
fails the connector's task with the broker's message, and the password shows
in no log line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.secured_broker import sasl_ssl_broker, sasl_ssl_client_props
from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for_rest,
)
from harness.tls_certs import TestCA

PASSWORD = "sasl-ssl-worker-secret"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def secured_broker(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("broker") / "data"
    broker = sasl_ssl_broker(data, ca, "connect", PASSWORD).start()
    yield broker
    assert broker.stop() == 0, broker.log_text()


def _worker(root: Path, broker: BrokerProcess, ca: TestCA, password: str) -> StandaloneProcess:
    return StandaloneProcess(
        root,
        **{
            "bootstrap.servers": broker.bootstrap,
            **sasl_ssl_client_props(ca, "connect", password),
            "task.restart.enabled": "false",
        },
    )


def test_a_pipeline_through_the_secured_broker(
    secured_broker: BrokerProcess, ca: TestCA, tmp_path: Path
) -> None:
    worker = _worker(tmp_path / "worker", secured_broker, ca, PASSWORD).start()  # /health: 200
    try:
        assert worker.http.get("/").json()["kafka_cluster_id"]  # the admin client logged in
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line {i}\n" for i in range(50)))
        worker.write_pipeline("src", file_source("src", source, "secured-lines"))
        worker.write_pipeline("snk", file_sink("snk", sink, "secured-lines"))
        wait_for_rest(lambda: len(read_lines(sink)) == 50, "every line through SASL_SSL")
        assert read_lines(sink) == [f"line {i}" for i in range(50)]
    finally:
        code = worker.stop()
        worker.close()
    assert code == 0, worker.log_text()
    assert PASSWORD not in worker.log_text()


def test_a_wrong_password_fails_the_task_with_the_brokers_message(
    secured_broker: BrokerProcess, ca: TestCA, tmp_path: Path
) -> None:
    worker = _worker(tmp_path / "worker", secured_broker, ca, "not-the-" + PASSWORD)
    worker.launch()
    try:
        source = tmp_path / "in.txt"
        source.write_text("x\n")
        worker.write_pipeline("src", file_source("src", source, "denied-lines"))

        def failed() -> str:
            status = worker.status("src")
            if status is None:
                raise KeyError("not yet")
            traces = [t.get("trace") or "" for t in status["tasks"]]
            traces.append(status["connector"].get("trace") or "")
            text = "".join(traces)
            if "FAILED" not in str(status) or not text:
                raise KeyError("not failed yet")
            return text

        trace = wait_for_rest(failed, "the task FAILED")
        assert "Authentication failed" in trace or "SASL_AUTHENTICATION_FAILED" in trace, trace
        assert "not-the-" + PASSWORD not in trace
    finally:
        worker.stop()
        worker.close()
    assert "not-the-" + PASSWORD not in worker.log_text()
