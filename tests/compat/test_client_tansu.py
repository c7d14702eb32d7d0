"""Our client against Tansu, a Kafka-compatible broker in Rust that is not ours.

Tansu 0.6.0 advertises the newest versions (flexible ones included) but
answers InitProducerId v0-2 with UNKNOWN_SERVER_ERROR (v3+, which carry the
producer id and epoch, work), so an idempotent producer works only if the
client negotiates v3 or later, a flexible version. Tansu does check producer
sequences (duplicates, gaps, fenced epochs). Producer (idempotent by default),
consumer groups and the admin client run against it for real.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.tansu import TansuProcess
from log_engine.client import (
    Producer,
    SyncAdmin,
    SyncConsumer,
    SyncProducer,
    TopicPartition,
)
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.protocol import ApiKey
from log_engine.protocol.apis import REQUESTS
from log_engine.protocol.versions import CLIENT_VERSIONS

pytestmark = pytest.mark.compat

_DEADLINE_S = 30.0
# Tansu holds a new group's first JoinGroup for about half the session timeout (23 s
# at the default 45 s; librdkafka waits as long): a short session keeps the tests short.
_SHORT_JOIN = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}


def _consume(consumer: SyncConsumer, count: int) -> list[tuple[bytes | None, bytes | None]]:
    got: list[tuple[bytes | None, bytes | None]] = []
    deadline = time.monotonic() + _DEADLINE_S
    while len(got) < count and time.monotonic() < deadline:
        got += [(record.key, record.value) for record in consumer.poll(0.5)]
    return got


def test_versions_negotiated_with_tansu_are_the_newest_both_speak(tansu: TansuProcess) -> None:
    async def negotiate() -> dict[ApiKey, int]:
        host, port = tansu.bootstrap.split(":")
        config = ClientConfig.model_validate({"bootstrap.servers": tansu.bootstrap})
        conn = await BrokerConnection.open(host, int(port), config)
        try:
            return dict(conn.api_versions)
        finally:
            conn.close()
            await conn.wait_closed()

    versions = asyncio.run(negotiate())
    # Tansu serves flexible versions of every API our client uses but CreatePartitions,
    # OffsetForLeaderEpoch (a follower's call), DescribeLogDirs and DeleteAcls, which
    # it does not serve at all: each one is negotiated to a flexible version.
    unserved = {
        ApiKey.CREATE_PARTITIONS,
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        ApiKey.DESCRIBE_LOG_DIRS,
        ApiKey.DELETE_ACLS,
    }
    assert not unserved & set(versions)
    assert set(versions) == set(CLIENT_VERSIONS) - unserved
    for key, version in versions.items():
        assert version <= CLIENT_VERSIONS[key][1]
        if key != ApiKey.SASL_HANDSHAKE:  # Kafka never gave SaslHandshake a flexible version
            assert REQUESTS[key].is_flexible(version), (key.name, version)
    assert versions[ApiKey.INIT_PRODUCER_ID] == 5
    assert versions[ApiKey.PRODUCE] == 11
    assert versions[ApiKey.API_VERSIONS] == 4
    assert versions[ApiKey.FETCH] == 17  # topics by id: the consumer tests below use it


def test_idempotent_producer_and_group_consumer(tansu: TansuProcess) -> None:
    topic = "tansu-idempotent"
    with SyncAdmin({"bootstrap.servers": tansu.bootstrap}) as admin:
        admin.create_topic(topic, 3, 1)

    with SyncProducer({"bootstrap.servers": tansu.bootstrap}) as producer:
        assert producer.config.idempotent  # the default: acks=all, idempotence on
        sent = [producer.send(topic, b"v-%d" % i, key=b"k-%d" % (i % 50)) for i in range(200)]
        producer.flush()
        delivered = [future.result(_DEADLINE_S) for future in sent]
    assert {meta.partition for meta in delivered} == {0, 1, 2}
    for partition in range(3):  # offsets in each partition are 0..n-1, no gaps
        offsets = sorted(m.offset for m in delivered if m.partition == partition)
        assert offsets == list(range(len(offsets)))

    group = {"bootstrap.servers": tansu.bootstrap, "group.id": "tansu-g1", **_SHORT_JOIN}
    settings = {**group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    with SyncConsumer(settings) as consumer:
        consumer.subscribe([topic])
        first = _consume(consumer, 120)
        assert len(first) >= 120
        consumer.commit()
    with SyncConsumer(settings) as consumer:  # a new member resumes from the commits
        consumer.subscribe([topic])
        rest = _consume(consumer, 200 - len(first))
        committed = consumer.committed([TopicPartition(topic, p) for p in range(3)])
    assert sorted(first + rest) == sorted((b"k-%d" % (i % 50), b"v-%d" % i) for i in range(200))
    assert sum(meta.offset for meta in committed.values() if meta is not None) == len(first)


def test_async_producer_with_many_partitions_in_flight(tansu: TansuProcess) -> None:
    topic = "tansu-async"

    async def produce() -> list[int]:
        async with Producer({"bootstrap.servers": tansu.bootstrap, "linger.ms": 5}) as producer:
            futures = [await producer.send(topic, b"x" * 100, partition=0) for _ in range(500)]
            return [(await future).offset for future in futures]

    with SyncAdmin({"bootstrap.servers": tansu.bootstrap}) as admin:
        admin.create_topic(topic, 1, 1)
    assert asyncio.run(produce()) == list(range(500))


def test_admin_client(tansu: TansuProcess) -> None:
    topic = "tansu-admin"
    with SyncAdmin({"bootstrap.servers": tansu.bootstrap}) as admin:
        admin.create_topic(topic, 2, 1)
        assert topic in admin.list_topics()
        description = admin.describe_topics([topic])[topic]
        assert [p.partition for p in description.partitions] == [0, 1]
        with SyncProducer({"bootstrap.servers": tansu.bootstrap}) as producer:
            producer.send(topic, b"one", partition=1).result(_DEADLINE_S)
        ends = admin.list_offsets({TopicPartition(topic, 1): "latest"})
        assert ends[TopicPartition(topic, 1)][0] == 1  # (offset, timestamp)

        group = "tansu-admin-group"
        settings = {"bootstrap.servers": tansu.bootstrap, "group.id": group, **_SHORT_JOIN}
        with SyncConsumer({**settings, "auto.offset.reset": "earliest"}) as consumer:
            consumer.subscribe([topic])
            assert _consume(consumer, 1) == [(None, b"one")]
            consumer.commit()
        assert group in {listing.group_id for listing in admin.list_groups()}
        assert admin.describe_groups([group])[group].protocol_type == "consumer"
        offsets = admin.list_consumer_group_offsets(group)
        assert offsets[TopicPartition(topic, 1)].offset == 1

        admin.delete_topics([topic])
        assert topic not in admin.list_topics()
