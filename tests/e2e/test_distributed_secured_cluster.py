"""Two ``sluice distributed`` workers on a SASL_SSL-only cluster (issue 19).

A broker process listens on SASL_SSL only (SCRAM-SHA-512, a throwaway CA).
Both workers take the worker-level client keys as a Kafka Connect user writes
them, and nothing else: their config, offset and status topics, their group
membership, the cluster id lookup and their tasks all log in. A file pipeline
created through the follower (the write is forwarded, signed, to the leader)
runs end to end. A worker with a wrong password exits at start with the
broker's authentication failure, and the password shows in no log line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess, config_of, put_config
from harness.secured_broker import sasl_ssl_broker, sasl_ssl_client_props
from harness.standalone_process import file_sink, file_source, read_lines, wait_for_rest
from harness.tls_certs import TestCA
from harness.wait import wait_for

PASSWORD = "distributed-worker-secret"
LINES = 50


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def secured_broker(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("broker") / "data"
    broker = sasl_ssl_broker(data, ca, "connect", PASSWORD).start()
    yield broker
    assert broker.stop() == 0, broker.log_text()


def _worker(
    root: Path, broker: BrokerProcess, ca: TestCA, password: str, group_id: str
) -> DistributedProcess:
    return DistributedProcess(
        root,
        bootstrap=broker.bootstrap,
        group_id=group_id,
        **sasl_ssl_client_props(ca, "connect", password),
    )


def _leader_and_follower(
    workers: list[DistributedProcess],
) -> tuple[DistributedProcess, DistributedProcess]:
    for worker in workers:
        if "(leader)" in worker.log_text():
            return worker, next(w for w in workers if w is not worker)
    raise AssertionError("no worker says it leads")


def test_a_pipeline_through_the_follower_on_the_secured_cluster(
    secured_broker: BrokerProcess, ca: TestCA, tmp_path: Path
) -> None:
    workers = [
        _worker(tmp_path / name, secured_broker, ca, PASSWORD, "secured") for name in ("a", "b")
    ]
    try:
        for worker in workers:
            worker.start()  # /health: 200 once the stores are read and the group joined
        _, follower = wait_for_rest(lambda: _leader_and_follower(workers), "a leader")
        for worker in workers:
            assert worker.http.get("/").json()["kafka_cluster_id"]
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line {i}\n" for i in range(LINES)))
        put_config(follower, "src", config_of(file_source("src", source, "secured-lines")))
        put_config(follower, "snk", config_of(file_sink("snk", sink, "secured-lines")))
        for worker in workers:
            worker.wait_running("src")
            worker.wait_running("snk")
        wait_for_rest(lambda: len(read_lines(sink)) >= LINES, "every line through SASL_SSL")
        assert sorted(set(read_lines(sink))) == sorted(f"line {i}" for i in range(LINES))
    finally:
        codes = [worker.stop() for worker in workers]
        for worker in workers:
            worker.close()
    for worker, code in zip(workers, codes, strict=True):
        assert code == 0, worker.log_text()
        assert PASSWORD not in worker.log_text()


def test_a_wrong_password_stops_the_worker_at_start(
    secured_broker: BrokerProcess, ca: TestCA, tmp_path: Path
) -> None:
    wrong = "not-the-" + PASSWORD
    worker = _worker(tmp_path / "w", secured_broker, ca, wrong, "denied").launch()
    try:
        process = worker.process
        assert process is not None
        wait_for(lambda: process.poll() is not None, "the worker exits")
        code = process.returncode
    finally:
        worker.close()
    text = worker.log_text()
    assert code == 1, text
    assert "the worker could not start" in text, text
    assert "Authentication failed" in text or "SASL_AUTHENTICATION_FAILED" in text, text
    assert wrong not in text and PASSWORD not in text
