"""Two ``sluice distributed`` workers on a SASL_SSL-only cluster (issue 19).

A broker process listens on SASL_SSL only (SCRAM-SHA-512, a throwaway CA).
Both workers take the worker-level client keys as a Kafka Connect user writes
them, and nothing else: their config, offset and status topics, their group
membership, the cluster id lookup and their tasks all log in. Their REST API
is HTTPS (its truststore the bare ``ssl.truststore.*`` the Kafka clients use)
behind basic authentication. A file pipeline runs end to end: the source made
through the follower's REST API, the sink from a pipeline file on the follower
(both forwarded to the leader, the watcher's request signed). A worker with a
wrong password exits at start with the broker's authentication failure, and
the password shows in no log line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_worker.worker_config import BASIC_AUTH_EXTENSION
from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess, config_of, put_config
from harness.secured_broker import sasl_ssl_broker, sasl_ssl_client_props
from harness.standalone_process import file_sink, file_source, read_lines, wait_for_rest
from harness.tls_certs import TestCA

PASSWORD = "distributed-worker-secret"
REST_USER, REST_PASSWORD = "alice", "alice-rest-secret"
JAAS_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
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


@pytest.fixture(scope="module")
def rest_security(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """HTTPS and basic authentication on the REST API: the truststore is the bare
    ``ssl.truststore.*`` the Kafka clients use too (Connect's fallback)."""
    root = tmp_path_factory.mktemp("rest")
    users = root / "rest-users.properties"
    users.write_text(f"{REST_USER}: {REST_PASSWORD}\n")
    jaas = root / "connect_jaas.conf"
    jaas.write_text(f'KafkaConnect {{\n  {JAAS_MODULE} required\n  file="{users}";\n}};\n')
    return {
        "listeners.https.ssl.keystore.type": "PEM",
        "listeners.https.ssl.keystore.location": str(ca.issue("localhost", server=True).pem),
        "rest.extension.classes": BASIC_AUTH_EXTENSION,
        "rest.basic.auth.jaas.config": str(jaas),
    }


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
    raise KeyError("no leader yet")


def test_a_pipeline_through_the_follower_on_the_secured_cluster(
    secured_broker: BrokerProcess, ca: TestCA, rest_security: dict[str, str], tmp_path: Path
) -> None:
    workers = [
        DistributedProcess(
            tmp_path / name,
            bootstrap=secured_broker.bootstrap,
            group_id="secured",
            scheme="https",
            cacert=ca.cert,
            auth=(REST_USER, REST_PASSWORD),
            **{**sasl_ssl_client_props(ca, "connect", PASSWORD), **rest_security},
        )
        for name in ("a", "b")
    ]
    try:
        for worker in workers:
            worker.start()  # /health: 200 once the stores are read and the group joined
        _, follower = wait_for_rest(lambda: _leader_and_follower(workers), "a leader")
        for worker in workers:
            assert worker.http.get("/").json()["kafka_cluster_id"]
            assert worker.http.get("/connectors", auth=(REST_USER, "x")).status_code == 401
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line {i}\n" for i in range(LINES)))
        put_config(follower, "src", config_of(file_source("src", source, "secured-lines")))
        # the follower's watcher has no REST user: its request to the leader is signed
        follower.write_pipeline("snk", file_sink("snk", sink, "secured-lines"))
        for worker in workers:
            worker.wait_running("src")
            worker.wait_running("snk")
        wait_for_rest(lambda: len(read_lines(sink)) >= LINES, "every line through SASL_SSL")
        assert sorted(set(read_lines(sink))) == sorted(f"line {i}" for i in range(LINES))
    finally:
        for worker in workers:  # an idle HTTPS keep-alive holds uvicorn's shutdown ~20 s
            worker.http.close()
        codes = [worker.stop() for worker in workers]
        for worker in workers:
            worker.close()
    for worker, code in zip(workers, codes, strict=True):
        assert code == 0, worker.log_text()
        assert PASSWORD not in worker.log_text()
        assert REST_PASSWORD not in worker.log_text()


def test_a_wrong_password_stops_the_worker_at_start(
    secured_broker: BrokerProcess, ca: TestCA, tmp_path: Path
) -> None:
    wrong = "not-the-" + PASSWORD
    worker = _worker(tmp_path / "w", secured_broker, ca, wrong, "denied").launch()
    try:
        code = worker.wait_exit()
    finally:
        worker.close()
    text = worker.log_text()
    assert code == 1, text
    assert "the worker could not start" in text, text
    assert "Authentication failed" in text or "SASL_AUTHENTICATION_FAILED" in text, text
    assert wrong not in text and PASSWORD not in text
