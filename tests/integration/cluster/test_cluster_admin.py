"""CreatePartitions, DeleteRecords and IncrementalAlterConfigs in a three-node cluster
(real processes).

CreatePartitions sent to one broker goes to the active controller, which adds
PartitionRecords; every broker then lists the new partitions with a leader and
an ISR of three and creates their replicas, so produce and consume work on
them. DeleteRecords is served by the partition's leader only; its followers
take the new log start offset from their fetches, which ListOffsets with
Kafka's debugging replica id (-2) shows on each replica's own log.
IncrementalAlterConfigs of a topic goes to the controller as ConfigRecords:
every broker describes the new value and the leader's log enforces it.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourceType,
)

from harness.cluster import LocalCluster
from harness.wait import wait_for
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.protocol import ApiKey


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    nodes = LocalCluster(
        tmp_path,
        **{"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"},
    )
    with nodes.running():
        yield nodes


def _create(cluster: LocalCluster, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.nodes[1].bootstrap})
    admin.create_topics([NewTopic(name, 1, 3)], operation_timeout=30)[name].result(60)


def _partitions_on(cluster: LocalCluster, node_id: int, topic: str) -> list[dict[str, Any]]:
    """``kcat -L`` asked of one broker: the topic's partitions by index."""
    topics = [t for t in cluster.metadata(topic, node_id)["topics"] if t["topic"] == topic]
    return sorted(topics[0]["partitions"], key=lambda p: p["partition"]) if topics else []


def _full(partitions: list[dict[str, Any]], count: int) -> bool:
    return [p["partition"] for p in partitions] == list(range(count)) and all(
        p["leader"] in (1, 2, 3)
        and sorted(r["id"] for r in p["replicas"]) == [1, 2, 3]
        and sorted(r["id"] for r in p["isrs"]) == [1, 2, 3]
        for p in partitions
    )


def _wait_full(cluster: LocalCluster, topic: str, count: int) -> None:
    for node_id in cluster.nodes:
        wait_for(
            lambda n=node_id: _full(_partitions_on(cluster, n, topic), count),
            f"{topic}: {count} partitions with ISRs of three on node {node_id}",
            60,
            retry_on=(subprocess.SubprocessError, ValueError, KeyError),
        )


def _produce(bootstrap: str, topic: str, partition: int, values: list[bytes]) -> None:
    errors: list[KafkaError | None] = []
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True}
    )
    for value in values:
        producer.produce(
            topic, value, partition=partition, on_delivery=lambda e, _m: errors.append(e)
        )
    producer.flush(60)
    assert errors == [None] * len(values)


def _consume(bootstrap: str, topic: str, partition: int, count: int) -> list[tuple[int, bytes]]:
    """(offset, value) of the first ``count`` records from the earliest offset."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4()}",
         "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )  # fmt: skip
    consumer.assign([TopicPartition(topic, partition, -2)])
    seen: list[tuple[int, bytes]] = []
    try:
        def more() -> bool:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                seen.append((message.offset(), message.value()))
            return len(seen) >= count

        wait_for(more, f"{count} records of {topic}-{partition}", 60)
    finally:
        consumer.close()
    return seen


def test_create_partitions_through_one_broker_reaches_every_broker(cluster: LocalCluster) -> None:
    _create(cluster, "grow")
    _wait_full(cluster, "grow", 1)
    admin = AdminClient({"bootstrap.servers": cluster.nodes[2].bootstrap})
    admin.create_partitions([NewPartitions("grow", 3)], operation_timeout=30)["grow"].result(60)
    _wait_full(cluster, "grow", 3)
    for partition in (1, 2):
        values = [f"p{partition}-{i}".encode() for i in range(5)]
        _produce(cluster.bootstrap, "grow", partition, values)
        assert _consume(cluster.bootstrap, "grow", partition, 5) == list(enumerate(values))

    checked = admin.create_partitions([NewPartitions("grow", 5)], validate_only=True)
    checked["grow"].result(60)
    refused = admin.create_partitions(
        [NewPartitions("grow", 2), NewPartitions("no-such-topic", 4)], operation_timeout=30
    )
    with pytest.raises(KafkaException) as fewer:
        refused["grow"].result(60)
    assert fewer.value.args[0].code() == KafkaError.INVALID_PARTITIONS
    assert "currently has 3 partition(s); 2 would not be an increase" in fewer.value.args[0].str()
    with pytest.raises(KafkaException) as unknown:
        refused["no-such-topic"].result(60)
    assert unknown.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert all(len(_partitions_on(cluster, n, "grow")) == 3 for n in cluster.nodes)


def _ask(port: int, api: ApiKey, body: dict[str, Any], version: int) -> dict[str, Any]:
    async def ask() -> dict[str, Any]:
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        try:
            return dict(await connection.send(api, body, version=version))
        finally:
            connection.close()

    return asyncio.run(ask())


def _log_start_on(port: int, topic: str) -> int:
    """The earliest offset of ``topic``-0 in this broker's own replica (replica id -2)."""
    body = {
        "replica_id": -2,
        "isolation_level": 0,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -2}]}
        ],
    }
    (answer,) = _ask(port, ApiKey.LIST_OFFSETS, body, 2)["topics"][0]["partitions"]
    assert answer["error_code"] == 0, answer
    return int(answer["offset"])


def _delete_records(port: int, topic: str, offset: int) -> dict[str, Any]:
    body = {
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "offset": offset}]}],
        "timeout_ms": 30_000,
    }
    (answer,) = _ask(port, ApiKey.DELETE_RECORDS, body, 1)["topics"][0]["partitions"]
    return dict(answer)


def test_delete_records_at_the_leader_moves_every_replicas_log_start(
    cluster: LocalCluster,
) -> None:
    _create(cluster, "trim")
    _wait_full(cluster, "trim", 1)
    _produce(cluster.bootstrap, "trim", 0, [b"v%d" % i for i in range(10)])
    leader = _partitions_on(cluster, 1, "trim")[0]["leader"]
    followers = [n for n in cluster.nodes if n != leader]
    for node_id in followers:
        answer = _delete_records(cluster.nodes[node_id].broker_port, "trim", 3)
        assert answer["error_code"] == KafkaError.NOT_LEADER_FOR_PARTITION, answer
    assert _delete_records(cluster.nodes[leader].broker_port, "trim", 11)["error_code"] == (
        KafkaError.OFFSET_OUT_OF_RANGE
    )

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    (deleted,) = admin.delete_records([TopicPartition("trim", 0, 6)], request_timeout=30).values()
    assert deleted.result(60).low_watermark == 6
    for node_id, node in cluster.nodes.items():
        wait_for(
            lambda p=node.broker_port: _log_start_on(p, "trim") == 6,
            f"log start offset 6 on node {node_id}",
            30,
        )
    assert _consume(cluster.bootstrap, "trim", 0, 4) == [(i, b"v%d" % i) for i in range(6, 10)]


def _described_on(port: int, topic: str, key: str) -> str | None:
    body = {
        "resources": [
            {"resource_type": 2, "resource_name": topic, "configuration_keys": [key]}
        ],
        "include_synonyms": False,
    }
    (result,) = _ask(port, ApiKey.DESCRIBE_CONFIGS, body, 1)["results"]
    assert result["error_code"] == 0, result
    (entry,) = result["configs"]
    return str(entry["value"])


def _acks_all_error(bootstrap: str, topic: str) -> int | None:
    errors: list[KafkaError | None] = []
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "retries": 0,
         "message.timeout.ms": 20_000}
    )  # fmt: skip
    producer.produce(topic, b"v", on_delivery=lambda e, _m: errors.append(e))
    producer.flush(30)
    assert len(errors) == 1
    return None if errors[0] is None else errors[0].code()


def _alter(admin: AdminClient, topic: str, *entries: ConfigEntry) -> None:
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=list(entries))
    (future,) = admin.incremental_alter_configs([resource], request_timeout=30).values()
    future.result(60)


def test_incremental_alter_configs_reaches_every_broker_and_the_leader(
    cluster: LocalCluster,
) -> None:
    _create(cluster, "cfg")
    _wait_full(cluster, "cfg", 1)
    assert _acks_all_error(cluster.bootstrap, "cfg") is None
    admin = AdminClient({"bootstrap.servers": cluster.nodes[3].bootstrap})
    _alter(admin, "cfg", ConfigEntry("min.insync.replicas", "4",
                                     incremental_operation=AlterConfigOpType.SET))  # fmt: skip
    # librdkafka sends the request to any broker (that one answers once its image has
    # the change); every broker's image follows
    for node_id, node in cluster.nodes.items():
        wait_for(
            lambda p=node.broker_port: _described_on(p, "cfg", "min.insync.replicas") == "4",
            f"min.insync.replicas=4 on node {node_id}",
            30,
        )
    wait_for(
        lambda: _acks_all_error(cluster.bootstrap, "cfg") == KafkaError.NOT_ENOUGH_REPLICAS,
        "acks=all refused under min.insync.replicas=4",
        60,
    )
    _alter(admin, "cfg", ConfigEntry("min.insync.replicas", None,
                                     incremental_operation=AlterConfigOpType.DELETE))  # fmt: skip
    wait_for(  # the leader's image follows the broker that answered
        lambda: _acks_all_error(cluster.bootstrap, "cfg") is None,
        "acks=all accepted again once min.insync.replicas is deleted",
        60,
    )

    for topic, entry, code in [
        ("cfg", ConfigEntry("no.such.key", "1", incremental_operation=AlterConfigOpType.SET),
         KafkaError.INVALID_CONFIG),
        ("cfg", ConfigEntry("retention.ms", "soon", incremental_operation=AlterConfigOpType.SET),
         KafkaError.INVALID_CONFIG),
        ("no-such-topic", ConfigEntry("retention.ms", "1",
                                      incremental_operation=AlterConfigOpType.SET),
         KafkaError.UNKNOWN_TOPIC_OR_PART),
    ]:  # fmt: skip
        with pytest.raises(KafkaException) as refused:
            _alter(admin, topic, entry)
        assert refused.value.args[0].code() == code, refused.value.args[0]
