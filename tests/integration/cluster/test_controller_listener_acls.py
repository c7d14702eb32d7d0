"""ACL checks on the controller listener (issue 19).

Three nodes whose controller and inter-broker listeners speak SASL_PLAINTEXT
(PLAIN) with the authorizer on and ``allow.everyone.if.no.acl.found=false``:
the nodes log in as ``User:broker``, a super user, so the cluster forms and
replicates. A client that logs in on the controller listener as
``User:mallory`` (a valid login, no ACL) and sends BrokerRegistration and
BrokerHeartbeat for a made-up broker is answered CLUSTER_AUTHORIZATION_FAILED
by every controller, and the broker never appears; the same requests sent as
``User:broker`` are accepted (so the refusal is the ACL check, not a
malformed request). A controller-only node (``process.roles=controller``, no
client listener) checks the same.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import LocalCluster
from harness.wait import wait_for
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

USERS = 'user_broker="broker-secret" user_mallory="mallory-secret";'
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="broker" password="broker-secret" {USERS}'
)
SETTINGS = {
    "listener.security.protocol.map": (
        "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT"
    ),
    "inter.broker.listener.name": "SASL_PLAINTEXT",
    "sasl.enabled.mechanisms": "PLAIN",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "sasl.mechanism.controller.protocol": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
    "listener.name.controller.plain.sasl.jaas.config": PLAIN_JAAS,
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found": "false",
    "super.users": "User:broker",
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "500",
}
MADE_UP_BROKER = 7


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, extra_listeners=("SASL_PLAINTEXT",), **SETTINGS).running() as nodes:
        yield nodes


def _client(user: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
    }


def _cluster_id(cluster: LocalCluster) -> str:
    text = (cluster.directory / "data1" / "meta.properties").read_text()
    lines = text.splitlines()
    return next(line.split("=", 1)[1] for line in lines if line.startswith("cluster.id="))


async def _ask_controllers(
    cluster: LocalCluster, user: str, api_key: ApiKey, version: int, body: dict[str, Any]
) -> list[dict[str, Any]]:
    """``body`` sent to every node's controller listener as ``user``: the answers."""
    answers = []
    for node in cluster.nodes.values():
        config = ClientConfig.from_mapping(
            {"bootstrap.servers": [f"127.0.0.1:{node.controller_port}"], **_client(user)}
        )
        connection = await BrokerConnection.open("127.0.0.1", node.controller_port, config)
        try:
            answers.append(await connection.send(api_key, body, version=version))
        finally:
            connection.close()
    return answers


def _registration(cluster: LocalCluster) -> dict[str, Any]:
    return {
        "broker_id": MADE_UP_BROKER,
        "cluster_id": _cluster_id(cluster),
        "incarnation_id": uuid.uuid4(),
        "listeners": [
            {"name": "PLAINTEXT", "host": "127.0.0.1", "port": 1, "security_protocol": 0},
            {"name": "SASL_PLAINTEXT", "host": "127.0.0.1", "port": 2, "security_protocol": 2},
        ],
        "features": [],
        "rack": None,
        "is_migrating_zk_broker": False,
        "log_dirs": [],
        "previous_broker_epoch": -1,
    }


def _heartbeat(epoch: int) -> dict[str, Any]:
    return {
        "broker_id": MADE_UP_BROKER,
        "broker_epoch": epoch,
        "current_metadata_offset": 1 << 40,
        "want_fence": False,
        "want_shut_down": False,
    }


def _live_brokers(cluster: LocalCluster) -> list[int]:
    admin = AdminClient({"bootstrap.servers": cluster.nodes[1].bootstrap_on("SASL_PLAINTEXT"),
                         **_client("broker")})  # fmt: skip
    return sorted(admin.list_topics(timeout=10).brokers)


def test_a_non_super_user_on_the_controller_listener_is_refused(cluster: LocalCluster) -> None:
    denied = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    registered = asyncio.run(
        _ask_controllers(cluster, "mallory", ApiKey.BROKER_REGISTRATION, 3, _registration(cluster))
    )
    assert [a["error_code"] for a in registered] == [denied] * 3
    for epoch in (-1, 0, 1 << 20):  # no epoch the controller may have given out works
        beats = asyncio.run(
            _ask_controllers(cluster, "mallory", ApiKey.BROKER_HEARTBEAT, 1, _heartbeat(epoch))
        )
        assert [a["error_code"] for a in beats] == [denied] * 3
    assert _live_brokers(cluster) == [1, 2, 3]
    log = "".join(node.log_text() for node in cluster.nodes.values())
    assert "User:mallory does not have required CLUSTER_ACTION" in log

    # the same requests from a super user: accepted by the active controller
    answers = asyncio.run(
        _ask_controllers(cluster, "broker", ApiKey.BROKER_REGISTRATION, 3, _registration(cluster))
    )
    accepted = [a for a in answers if a["error_code"] != ErrorCode.NOT_CONTROLLER]
    assert [a["error_code"] for a in accepted] == [0], answers
    epoch = accepted[0]["broker_epoch"]

    def unfenced() -> bool:
        asyncio.run(
            _ask_controllers(cluster, "broker", ApiKey.BROKER_HEARTBEAT, 1, _heartbeat(epoch))
        )
        return MADE_UP_BROKER in _live_brokers(cluster)

    wait_for(unfenced, "the made-up broker registered by a super user unfenced", 30)


def test_a_sasl_cluster_with_the_authorizer_forms_and_replicates(cluster: LocalCluster) -> None:
    bootstrap = cluster.nodes[1].bootstrap_on("SASL_PLAINTEXT")
    admin = AdminClient({"bootstrap.servers": bootstrap, **_client("broker")})
    topic = NewTopic("ruled", num_partitions=3, replication_factor=3,
                     config={"min.insync.replicas": "3"})  # fmt: skip
    admin.create_topics([topic])["ruled"].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **_client("broker")})
    for i in range(9):
        producer.produce("ruled", f"v{i}".encode(), partition=i % 3)
    assert producer.flush(60) == 0
    partitions = admin.list_topics("ruled", timeout=10).topics["ruled"].partitions
    assert all(sorted(p.isrs) == [1, 2, 3] for p in partitions.values())
    assert "does not have required" not in "".join(n.log_text() for n in cluster.nodes.values())


def test_a_controller_only_node_checks_too(tmp_path: Path) -> None:
    nodes = LocalCluster(tmp_path, extra_listeners=("SASL_PLAINTEXT",), **SETTINGS)
    third = nodes.nodes[3]
    text = third.properties.read_text().replace("process.roles=broker,controller",
                                                "process.roles=controller")  # fmt: skip
    text = re.sub(r"^listeners=.*$", f"listeners=CONTROLLER://127.0.0.1:{third.controller_port}",
                  text, flags=re.M)  # fmt: skip
    third.properties.write_text(text)
    nodes.start()
    try:
        wait_for(
            lambda: all(nodes.live_broker_ids(n) == [1, 2] for n in (1, 2)),
            "brokers 1 and 2 registered",
            60,
            retry_on=(subprocess.SubprocessError, ValueError, KeyError),
        )
        denied = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        registered = asyncio.run(
            _ask_controllers(nodes, "mallory", ApiKey.BROKER_REGISTRATION, 3, _registration(nodes))
        )
        assert [a["error_code"] for a in registered] == [denied] * 3
        assert "User:mallory does not have required CLUSTER_ACTION" in third.log_text()
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for node in nodes.nodes.values():
            node.kill(signal.SIGKILL)
