"""Followers fetch over a SASL_SSL inter-broker listener (issue 19).

Three nodes with a plaintext client listener and a SASL_SSL listener named by
``inter.broker.listener.name``: every follower connects to its leader with TLS
and SCRAM-SHA-512 as ``User:broker`` (``sasl.mechanism.inter.broker.protocol``,
``listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config``). With the
authorizer on and every principal denied CLUSTER_ACTION, followers still fetch
and the nodes still heartbeat (``User:broker``, a super user, is also the
controller listener's login), so acks=all with RF=3 and
``min.insync.replicas=3`` works. A node given a wrong inter-broker password
cannot fetch: it falls out of the ISR of the partitions it follows and says
why in its log.
"""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from prometheus_client.parser import text_string_to_metric_families

from harness.cluster import LocalCluster
from harness.tls_certs import TestCA
from harness.wait import wait_for

SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="broker" password="{password}";'
)


def _settings(ca: TestCA, root: Path) -> dict[str, str]:
    broker = ca.issue("localhost", server=True)
    return {
        "inter.broker.listener.name": "SASL_SSL",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(broker.pem),
        "ssl.truststore.location": str(ca.cert),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS.format(
            password="broker-secret"
        ),
        "sasl.scram.bootstrap.users": "SCRAM-SHA-512=[name=broker,password=broker-secret]",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "super.users": "User:broker",
        "replica.lag.time.max.ms": "3000",
        "broker.session.timeout.ms": "3000",
        "broker.heartbeat.interval.ms": "500",
    }


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    # the controller listener logs in as User:broker too: the ACL below denies
    # CLUSTER_ACTION to everyone else, User:ANONYMOUS of a PLAINTEXT controller
    # listener included (its heartbeats would be refused)
    with _secured_controllers(tmp_path).running() as nodes:
        yield nodes


@pytest.fixture
def cluster_with_bad_password(tmp_path: Path) -> Iterator[LocalCluster]:
    settings = _settings(TestCA(tmp_path / "ca"), tmp_path)
    nodes = LocalCluster(tmp_path, extra_listeners=("SASL_SSL",), **settings)
    wrong = SCRAM_JAAS.format(password="not-the-password")
    with nodes.nodes[3].properties.open("a") as f:
        f.write(f"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config={wrong}\n")
    with nodes.running():
        yield nodes


def _create_topic(bootstrap: str, name: str, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=3, replication_factor=3, config=config)]
    )
    futures[name].result(timeout=30)


def _isr(cluster: LocalCluster, topic: str) -> dict[int, tuple[int, list[int]]]:
    partitions = cluster.metadata(topic)["topics"][0]["partitions"]
    return {
        int(p["partition"]): (int(p["leader"]), sorted(int(r["id"]) for r in p["isrs"]))
        for p in partitions
    }


def test_followers_fetch_over_sasl_ssl(cluster: LocalCluster) -> None:
    bootstrap = cluster.bootstrap
    _create_topic(bootstrap, "secured", **{"min.insync.replicas": "3"})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deny = AclBinding(
        ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:*", "*",
        AclOperation.CLUSTER_ACTION, AclPermissionType.DENY,
    )  # fmt: skip
    for future in admin.create_acls([deny]).values():
        future.result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    failures: list[str] = []
    for i in range(30):
        producer.produce(
            "secured",
            f"v{i}".encode(),
            partition=i % 3,
            on_delivery=lambda err, _msg: failures.append(str(err)) if err else None,
        )
    assert producer.flush(60) == 0
    assert failures == []
    assert all(isr == [1, 2, 3] for _, isr in _isr(cluster, "secured").values())
    assert "cannot authenticate" not in cluster.logs()


def test_a_wrong_inter_broker_password_drops_the_follower_from_the_isr(
    cluster_with_bad_password: LocalCluster,
) -> None:
    cluster = cluster_with_bad_password
    _create_topic(cluster.bootstrap, "guarded")

    def node3_out_where_it_follows() -> bool:
        state = _isr(cluster, "guarded")
        followed = [isr for leader, isr in state.values() if leader != 3]
        return bool(followed) and all(3 not in isr for isr in followed)

    wait_for(node3_out_where_it_follows, "node 3 out of the ISR of partitions it follows", 60)
    log = cluster.nodes[3].log_text()
    assert "replica fetcher of broker 3 cannot authenticate to broker" in log
    assert "SASL_SSL, SCRAM-SHA-512 as user broker" in log
    assert "not-the-password" not in log
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    producer.produce("guarded", b"still-writable", partition=0)
    assert producer.flush(30) == 0


def _secured_controllers(
    tmp_path: Path, *, metrics: bool = False, **extra: str
) -> LocalCluster:
    ca = TestCA(tmp_path / "ca")
    settings = {**_settings(ca, tmp_path), **extra}
    jaas = SCRAM_JAAS.format(password="broker-secret")
    settings.update(
        {
            "listener.security.protocol.map": (
                "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL"
            ),
            "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": jaas,
        }
    )
    return LocalCluster(tmp_path, metrics=metrics, extra_listeners=("SASL_SSL",), **settings)


@pytest.fixture
def secured_controllers(tmp_path: Path) -> Iterator[LocalCluster]:
    with _secured_controllers(tmp_path).running() as nodes:
        yield nodes


def test_controller_listener_over_sasl_ssl(secured_controllers: LocalCluster) -> None:
    cluster = secured_controllers
    _create_topic(cluster.bootstrap, "ruled", **{"min.insync.replicas": "3"})
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(9):
        producer.produce("ruled", f"v{i}".encode(), partition=i % 3)
    assert producer.flush(60) == 0
    assert all(isr == [1, 2, 3] for _, isr in _isr(cluster, "ruled").values())
    # the controller port speaks TLS: a plaintext Kafka client gets no answer there
    node = cluster.nodes[1]
    result = subprocess.run(
        ["kcat", "-b", f"127.0.0.1:{node.controller_port}", "-L", "-m", "3"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode != 0


def test_a_wrong_controller_password_keeps_the_node_out(tmp_path: Path) -> None:
    nodes = _secured_controllers(tmp_path)
    wrong = SCRAM_JAAS.format(password="not-the-password")
    with nodes.nodes[3].properties.open("a") as f:
        f.write(f"listener.name.controller.scram-sha-512.sasl.jaas.config={wrong}\n")
    nodes.start()
    try:
        running = [1, 2]
        wait_for(
            lambda: all(nodes.live_broker_ids(n) == running for n in running),
            "nodes 1 and 2 registered",
            60,
            retry_on=(subprocess.SubprocessError, ValueError, KeyError),
        )
        wait_for(
            lambda: "refuses this node's login on its controller listener"
            in nodes.nodes[3].log_text(),
            "node 3 logs the refused controller login",
            60,
        )
        log = nodes.nodes[3].log_text()
        assert "SASL_SSL, SCRAM-SHA-512 as user broker" in log
        assert "not-the-password" not in log
        assert nodes.live_broker_ids(1) == running  # node 3 never registered
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for node in nodes.nodes.values():
            node.kill(signal.SIGKILL)


def _socket_counter(cluster: LocalCluster, name: str) -> float:
    """``kafka_server_socket_server_metrics_<name>_total`` summed over nodes and listeners."""
    wanted = f"kafka_server_socket_server_metrics_{name}_total"
    total, seen = 0.0, False
    for node in cluster.nodes.values():
        with urllib.request.urlopen(node.metrics_url, timeout=10) as answer:
            text = answer.read().decode()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == wanted:
                    total, seen = total + sample.value, True
    assert seen, f"{wanted} not in /metrics"
    return total


def test_replication_and_the_quorum_reauthenticate(tmp_path: Path) -> None:
    """connections.max.reauth.ms=2000 on the SASL_SSL inter-broker and controller
    listeners: followers, quorum RPCs and heartbeats re-authenticate their
    connections and keep working for several session lifetimes."""
    with _secured_controllers(
        tmp_path, metrics=True, **{"connections.max.reauth.ms": "2000"}
    ).running() as cluster:
        _create_topic(cluster.bootstrap, "renewed", **{"min.insync.replicas": "3"})
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
        failures: list[str] = []
        deadline = time.monotonic() + 7.0  # more than three session lifetimes
        sent = 0
        while time.monotonic() < deadline:
            producer.produce(
                "renewed",
                f"v{sent}".encode(),
                partition=sent % 3,
                on_delivery=lambda err, _msg: failures.append(str(err)) if err else None,
            )
            sent += 1
            producer.poll(0.05)
        assert producer.flush(60) == 0
        assert failures == []
        assert all(isr == [1, 2, 3] for _, isr in _isr(cluster, "renewed").values())
        assert cluster.live_broker_ids(1) == [1, 2, 3]
        assert _socket_counter(cluster, "successful_reauthentication") >= 3
        assert _socket_counter(cluster, "expired_connections_killed") == 0
        assert _socket_counter(cluster, "failed_reauthentication") == 0
