"""A Sluice worker with PKCS12 stores reaching a mutual-TLS broker, principal mapped (issue 19).

The broker's SSL listener loads a PKCS12 key store and a JKS trust store made by
the JDK's keytool, asks for client certificates and maps subjects with
``ssl.principal.mapping.rules``; the only super user is the mapped name
``User:connect``, so the worker's clients get anywhere only if their
certificate (from the worker's PKCS12 key store) is read and mapped. A wrong
key store password stops the worker before it serves anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess, free_port
from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for_rest,
)
from harness.tls_certs import TestCA, pkcs12_keystore, truststore

STORE_PASSWORD = "worker-store-secret"
TRUST_PASSWORD = "trust-store-secret"


class Pki:
    def __init__(self, root: Path) -> None:
        self.ca = TestCA(root)
        self.broker_p12 = pkcs12_keystore(
            self.ca.issue("localhost", server=True), self.ca, root / "broker.p12", STORE_PASSWORD
        )
        self.connect_p12 = pkcs12_keystore(
            self.ca.issue("connect"), self.ca, root / "connect.p12", STORE_PASSWORD
        )
        self.trust_jks = truststore(self.ca, root / "trust.jks", TRUST_PASSWORD, "JKS")
        self.trust_p12 = truststore(self.ca, root / "trust.p12", TRUST_PASSWORD, "PKCS12")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    port = free_port()
    process = BrokerProcess(
        tmp_path_factory.mktemp("broker") / "data",
        port=port,
        listeners=f"SSL://127.0.0.1:{port}",
        **{
            "listener.security.protocol.map": "SSL:SSL",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(pki.broker_p12),
            "ssl.keystore.password": STORE_PASSWORD,
            "ssl.truststore.type": "JKS",
            "ssl.truststore.location": str(pki.trust_jks),
            "ssl.truststore.password": TRUST_PASSWORD,
            "ssl.client.auth": "required",
            "ssl.principal.mapping.rules": "RULE:^CN=(.*?),O=Sluice Tests,C=DE$/$1/, DEFAULT",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:connect",
        },
    ).start()
    yield process
    assert process.stop() == 0, process.log_text()


def _worker(root: Path, broker: BrokerProcess, pki: Pki, password: str) -> StandaloneProcess:
    return StandaloneProcess(
        root,
        **{
            "bootstrap.servers": broker.bootstrap,
            "security.protocol": "SSL",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(pki.connect_p12),
            "ssl.keystore.password": password,
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(pki.trust_p12),
            "ssl.truststore.password": TRUST_PASSWORD,
            "task.restart.enabled": "false",
        },
    )


def test_a_pipeline_with_pkcs12_stores_and_a_mapped_principal(
    broker: BrokerProcess, pki: Pki, tmp_path: Path
) -> None:
    worker = _worker(tmp_path / "worker", broker, pki, STORE_PASSWORD).start()
    try:
        assert worker.http.get("/").json()["kafka_cluster_id"]
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line {i}\n" for i in range(20)))
        worker.write_pipeline("src", file_source("src", source, "p12-lines"))
        worker.write_pipeline("snk", file_sink("snk", sink, "p12-lines"))
        wait_for_rest(lambda: len(read_lines(sink)) == 20, "every line over mutual TLS")
        assert read_lines(sink) == [f"line {i}" for i in range(20)]
    finally:
        code = worker.stop()
        worker.close()
    assert code == 0, worker.log_text()
    for secret in (STORE_PASSWORD, TRUST_PASSWORD):
        assert secret not in worker.log_text()
        assert secret not in broker.log_text()


def test_a_wrong_keystore_password_stops_the_worker(
    broker: BrokerProcess, pki: Pki, tmp_path: Path
) -> None:
    worker = _worker(tmp_path / "worker", broker, pki, "not-the-" + STORE_PASSWORD).launch()
    try:
        assert worker.wait_exit() not in (None, 0), worker.log_text()
    finally:
        worker.close()
    log = worker.log_text()
    assert "wrong ssl.keystore.password" in log and str(pki.connect_p12) in log, log
    assert STORE_PASSWORD not in log
