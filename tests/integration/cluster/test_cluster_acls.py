"""ACLs and SCRAM credentials in a three-node cluster: metadata records every
broker applies.

CreateAcls sent to one broker is forwarded to the active controller, which
appends AccessControlEntryRecords; every broker then answers DescribeAcls with
the binding and enforces it; a killed and restarted node has it again (from
the metadata log); DeleteAcls removes it everywhere. The listeners are
PLAINTEXT (every client is User:ANONYMOUS) with
``allow.everyone.if.no.acl.found=true``, so replication and the controller
traffic need no ACLs and a DENY is what the test observes.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from harness.cluster import LocalCluster
from harness.wait import wait_for
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.protocol import ApiKey

DENY_WRITE = AclBinding(
    ResourceType.TOPIC, "guarded", ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
    AclOperation.WRITE, AclPermissionType.DENY,
)  # fmt: skip


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path,
        **{
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
            "broker.session.timeout.ms": "3000",
            "broker.heartbeat.interval.ms": "500",
        },
    ).running() as nodes:
        yield nodes


def _describe_on(port: int) -> list[tuple[int, str, str, int, int]]:
    """DescribeAcls (any binding) asked of one broker: (type, name, principal, op, perm)."""

    async def ask() -> list[tuple[int, str, str, int, int]]:
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        try:
            body = await connection.send(
                ApiKey.DESCRIBE_ACLS,
                {"resource_type_filter": 1, "resource_name_filter": None,
                 "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
                 "operation": 1, "permission_type": 1},
                version=1,
            )
        finally:
            connection.close()
        assert body["error_code"] == 0, body
        return [
            (r["resource_type"], r["resource_name"], a["principal"], a["operation"],
             a["permission_type"])
            for r in body["resources"]
            for a in r["acls"]
        ]

    return asyncio.run(ask())


def _produce_error(bootstrap: str) -> int | None:
    results: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": "15000"})
    producer.produce("guarded", b"v", on_delivery=lambda err, _m: results.append(err))
    producer.flush(30)
    assert len(results) == 1
    return None if results[0] is None else results[0].code()


def test_acls_replicate_to_every_broker_and_survive_a_restart(cluster: LocalCluster) -> None:
    first = cluster.nodes[1]
    admin = AdminClient({"bootstrap.servers": first.bootstrap})
    admin.create_topics([NewTopic("guarded", 1, 3)], operation_timeout=30)["guarded"].result(60)
    wait_for(lambda: _produce_error(cluster.bootstrap) is None, "a first produce", 60)
    admin.create_acls([DENY_WRITE], request_timeout=30)[DENY_WRITE].result()
    expected = [(2, "guarded", "User:ANONYMOUS", 4, 2)]
    for node in cluster.nodes.values():  # every broker's image has it
        wait_for(lambda n=node: _describe_on(n.broker_port) == expected, "ACL on each", 30)
    assert _produce_error(cluster.bootstrap) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    restarted = cluster.nodes[3]
    restarted.kill(signal.SIGKILL)
    restarted.start()
    cluster.wait_registered()
    assert _describe_on(restarted.broker_port) == expected
    any_acl = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
        AclOperation.ANY, AclPermissionType.ANY,
    )  # fmt: skip
    second = AdminClient({"bootstrap.servers": cluster.nodes[2].bootstrap})
    assert second.delete_acls([any_acl], request_timeout=30)[any_acl].result() == [DENY_WRITE]
    for node in cluster.nodes.values():
        wait_for(lambda n=node: _describe_on(n.broker_port) == [], "ACL gone on each", 30)
    assert _produce_error(cluster.bootstrap) is None


def _scram_users_on(port: int) -> dict[str, list[tuple[int, int]]]:
    """DescribeUserScramCredentials (every user) asked of one broker."""

    async def ask() -> dict[str, list[tuple[int, int]]]:
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        try:
            body = await connection.send(
                ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, {"users": None}, version=0
            )
        finally:
            connection.close()
        assert body["error_code"] == 0, body
        return {
            r["user"]: [(i["mechanism"], i["iterations"]) for i in r["credential_infos"]]
            for r in body["results"]
        }

    return asyncio.run(ask())


def test_scram_credentials_replicate_and_survive_a_restart(cluster: LocalCluster) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.nodes[1].bootstrap})
    upsert = UserScramCredentialUpsertion(
        "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"carol-secret"
    )
    admin.alter_user_scram_credentials([upsert], request_timeout=30)["carol"].result()
    expected = {"carol": [(2, 8192)]}
    for node in cluster.nodes.values():
        wait_for(lambda n=node: _scram_users_on(n.broker_port) == expected, "user on each", 30)
    restarted = cluster.nodes[2]
    restarted.kill(signal.SIGKILL)
    restarted.start()
    cluster.wait_registered()
    assert _scram_users_on(restarted.broker_port) == expected
    deletion = UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512)
    other = AdminClient({"bootstrap.servers": cluster.nodes[3].bootstrap})
    other.alter_user_scram_credentials([deletion], request_timeout=30)["carol"].result()
    for node in cluster.nodes.values():
        wait_for(lambda n=node: _scram_users_on(n.broker_port) == {}, "user gone on each", 30)
