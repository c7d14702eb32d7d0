"""Several client listeners on one broker, each with its own security protocol.

A broker with ``listeners=PLAINTEXT://...,SASL_SSL://...`` serves kcat on both;
Metadata answers with the endpoints of the listener a request came in on, on a
single broker and in a three-node cluster (the metadata image holds every
broker's endpoints per listener name).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess, free_port
from harness.cluster import LocalCluster
from harness.tls_certs import Issued, TestCA
from log_engine.metadata.records import RegisterBrokerRecord, decode_record
from log_engine.replication.raft.file_storage import decode_entries

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" '
    'user_alice="alice-secret";'
)


class Pki:
    def __init__(self, root: Path) -> None:
        self.ca = TestCA(root / "ca")
        self.broker: Issued = self.ca.issue("localhost", server=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


def _sasl_ssl_settings(pki: Pki) -> dict[str, str]:
    return {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.broker.pem),
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
    }


def _kcat_sasl_ssl(pki: Pki, bootstrap: str) -> list[str]:
    return [
        "kcat", "-b", bootstrap,
        "-X", "security.protocol=SASL_SSL",
        "-X", f"ssl.ca.location={pki.ca.cert}",
        "-X", "sasl.mechanisms=PLAIN",
        "-X", "sasl.username=alice",
        "-X", "sasl.password=alice-secret",
    ]  # fmt: skip


def _kcat(args: list[str], stdin: str | None = None) -> str:
    result = subprocess.run(
        args, input=stdin, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _broker_ports(kcat: list[str]) -> dict[int, int]:
    brokers = json.loads(_kcat([*kcat, "-L", "-J", "-m", "10"]))["brokers"]
    return {int(b["id"]): int(b["name"].rsplit(":", 1)[1]) for b in brokers}


@pytest.fixture
def two_listeners(pki: Pki, tmp_path: Path) -> Iterator[tuple[BrokerProcess, int]]:
    port, secure = free_port(), free_port()
    process = BrokerProcess(
        tmp_path / "data",
        port=port,
        listeners=f"PLAINTEXT://127.0.0.1:{port},SASL_SSL://127.0.0.1:{secure}",
        **_sasl_ssl_settings(pki),
    ).start()
    yield process, secure
    assert process.stop() == 0, process.log_text()


def test_one_broker_serves_plaintext_and_sasl_ssl(
    two_listeners: tuple[BrokerProcess, int], pki: Pki
) -> None:
    broker, secure = two_listeners
    plain = ["kcat", "-b", broker.bootstrap]
    sasl_ssl = _kcat_sasl_ssl(pki, f"127.0.0.1:{secure}")
    assert _broker_ports(plain) == {1: broker.port}
    assert _broker_ports(sasl_ssl) == {1: secure}
    topic = f"two-{uuid.uuid4().hex[:8]}"
    _kcat([*plain, "-P", "-t", topic], stdin="over-plaintext\n")
    _kcat([*sasl_ssl, "-P", "-t", topic], stdin="over-sasl-ssl\n")
    for kcat in (plain, sasl_ssl):
        out = _kcat([*kcat, "-C", "-t", topic, "-o", "beginning", "-e", "-c", "2"])
        assert out.split() == ["over-plaintext", "over-sasl-ssl"]
    # a plaintext client on the TLS port gets nothing (the TLS listener refuses it)
    result = subprocess.run(
        ["kcat", "-b", f"127.0.0.1:{secure}", "-L", "-m", "3"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode != 0


@pytest.fixture
def cluster(pki: Pki, tmp_path: Path) -> Iterator[LocalCluster]:
    nodes = LocalCluster(tmp_path, extra_listeners=("SASL_SSL",), **_sasl_ssl_settings(pki))
    with nodes.running():
        yield nodes


def test_cluster_metadata_names_the_endpoints_of_the_listener_asked(
    cluster: LocalCluster, pki: Pki
) -> None:
    for node in cluster.nodes.values():
        secure = _broker_ports(_kcat_sasl_ssl(pki, node.bootstrap_on("SASL_SSL")))
        assert secure == {n: v.listener_ports["SASL_SSL"] for n, v in cluster.nodes.items()}
        plain = _broker_ports(["kcat", "-b", node.bootstrap])
        assert plain == {n: v.broker_port for n, v in cluster.nodes.items()}
    # each broker registered every listener with its security protocol id (Kafka's:
    # PLAINTEXT 0, SASL_SSL 3), which the RegisterBrokerRecords keep
    log = (cluster.directory / "data1" / "__cluster_metadata-0" / "raft.log").read_bytes()
    entries, _ = decode_entries(log)
    records = [decode_record(e.payload) for e in entries if not e.control]
    registered = {r.broker_id: r for r in records if isinstance(r, RegisterBrokerRecord)}
    assert sorted(registered) == [1, 2, 3]
    for record in registered.values():
        assert {e.name: e.security_protocol for e in record.endpoints} == {
            "PLAINTEXT": 0, "SASL_SSL": 3,
        }  # fmt: skip
