"""Replicated group coordinators: ``__consumer_offsets`` is a replicated topic and a
group's coordinator is the leader of its partition, so killing that broker moves the
group, with its committed offsets, to another broker.

Three ``sluice broker`` processes (``harness.cluster.LocalCluster``; one
``__consumer_offsets`` partition, so every group has the same coordinator), real
clients (librdkafka through confluent_kafka, and ``log_engine.client``), real
``kill -9``.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import LocalCluster
from harness.wait import wait_for
from log_engine.client import Consumer as SluiceConsumer
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.errors import KafkaError
from log_engine.client.types import TopicPartition as SluiceTopicPartition
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

SESSION_TIMEOUT_MS = 3000
T = TypeVar("T")
OFFSETS = "__consumer_offsets"


def _start(tmp_path: Path, **overrides: str) -> LocalCluster:
    cluster = LocalCluster(
        tmp_path,
        **{
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "3000",
            **overrides,
        },
    ).start()
    cluster.wait_registered()
    return cluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    nodes = _start(tmp_path)
    try:
        yield nodes
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for node in nodes.nodes.values():
            node.kill(signal.SIGKILL)


# -- raw requests ------------------------------------------------------------------------


def _send(port: int, api: ApiKey, body: dict[str, Any], version: int) -> dict[str, Any]:
    async def ask() -> dict[str, Any]:
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        try:
            return dict(await connection.send(api, body, version=version, timeout_ms=20_000))
        finally:
            connection.close()

    return asyncio.run(ask())


def _coordinator(cluster: LocalCluster, group: str, other_than: int | None = None) -> int:
    """The coordinator every running broker names (asked until they all name one, not
    ``other_than``)."""

    def ask() -> int | None:
        named = set()
        for node in cluster.nodes.values():
            if not node.is_alive():
                continue
            body = _send(
                node.broker_port, ApiKey.FIND_COORDINATOR, {"key": group, "key_type": 0}, 2
            )
            if body["error_code"]:
                return None
            named.add(int(body["node_id"]))
        if len(named) != 1 or other_than in named:
            return None
        return named.pop()

    return wait_for(ask, f"one coordinator for {group}", 60, retry_on=(OSError,))


def _commit(port: int, group: str, topic: str, offset: int) -> int:
    """A simple (generation -1) OffsetCommit of partition 0; the partition's error code."""
    body = {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                ],
            }
        ],
    }
    answer = _send(port, ApiKey.OFFSET_COMMIT, body, 7)
    return int(answer["topics"][0]["partitions"][0]["error_code"])


def _fetch(port: int, group: str, topic: str) -> tuple[int, int]:
    """OffsetFetch of partition 0: (error code, committed offset)."""
    body = {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}
    answer = _send(port, ApiKey.OFFSET_FETCH, body, 5)
    (partition,) = answer["topics"][0]["partitions"]
    return int(answer["error_code"] or partition["error_code"]), int(partition["committed_offset"])


# -- helpers -----------------------------------------------------------------------------


def _create(cluster: LocalCluster, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic(name, 1, 3)], operation_timeout=30)
    futures[name].result(timeout=60)


def _produce(cluster: LocalCluster, topic: str, count: int, first: int = 0) -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(first, first + count):
        producer.produce(topic, f"m{i}".encode())
    assert producer.flush(30) == 0


def _offsets_isr(cluster: LocalCluster) -> list[int]:
    (entry,) = [t for t in cluster.metadata(OFFSETS)["topics"] if t["topic"] == OFFSETS]
    return sorted(r["id"] for r in entry["partitions"][0]["isrs"])


def _wait_offsets_isr(cluster: LocalCluster, isr: list[int]) -> None:
    wait_for(
        lambda: _offsets_isr(cluster) == isr,
        f"{OFFSETS}'s ISR {isr}",
        60,
        retry_on=(subprocess.SubprocessError, ValueError, KeyError, IndexError),
    )


def _read(consumer: Consumer, count: int) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    return got


def _librdkafka_consumer(cluster: LocalCluster, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )


# -- tests -------------------------------------------------------------------------------


def test_killing_the_coordinator_moves_the_group_with_its_committed_offsets(
    cluster: LocalCluster,
) -> None:
    _create(cluster, "orders")
    _produce(cluster, "orders", 20)
    consumer = _librdkafka_consumer(cluster, "billing")
    consumer.subscribe(["orders"])
    assert _read(consumer, 10)[:1] == [b"m0"]
    consumer.commit(offsets=[TopicPartition("orders", 0, 10)], asynchronous=False)
    consumer.close()
    _wait_offsets_isr(cluster, [1, 2, 3])

    old = _coordinator(cluster, "billing")
    assert cluster.nodes[old].kill() == -signal.SIGKILL
    new = _coordinator(cluster, "billing", other_than=old)

    # a new member of the group resumes where the group committed, not at the start
    consumer = _librdkafka_consumer(cluster, "billing")
    consumer.subscribe(["orders"])
    got = _read(consumer, 10)
    (committed,) = consumer.committed([TopicPartition("orders", 0)], timeout=30)
    consumer.close()
    assert got == [f"m{i}".encode() for i in range(10, 20)]
    assert committed.offset == 10

    # the killed broker comes back, catches up and rejoins the offsets' ISR
    cluster.nodes[old].start()
    cluster.wait_registered()
    _wait_offsets_isr(cluster, [1, 2, 3])
    assert _fetch(cluster.nodes[new].broker_port, "billing", "orders") == (0, 10)


def test_our_consumer_follows_its_group_to_the_new_coordinator(cluster: LocalCluster) -> None:
    _create(cluster, "events")
    _produce(cluster, "events", 10)
    tp = SluiceTopicPartition("events", 0)
    old = _coordinator(cluster, "audit")
    committed_after_kill: list[int | None] = []

    async def consume() -> tuple[list[bytes], int | None]:
        config = {
            "bootstrap.servers": cluster.bootstrap.split(","),
            "group.id": "audit",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
        got: list[bytes] = []
        deadline = time.monotonic() + 60

        async def retrying(call: Callable[[], Awaitable[T]]) -> T:
            while True:  # fails retriably while the group moves; poll (rejoin) and retry
                try:
                    return await call()
                except KafkaError:
                    assert time.monotonic() < deadline
                    await consumer.poll(200)

        async with SluiceConsumer(config) as consumer:
            consumer.subscribe(["events"])
            while len(set(got)) < 30 and time.monotonic() < deadline:
                for record in await consumer.poll(500):
                    got.append(record.value or b"")
                    if len(got) == 10:
                        await consumer.commit()
                        # the coordinator dies under a live member: the new one has
                        # the group's commit; the member rejoins there and goes on
                        await asyncio.to_thread(cluster.nodes[old].kill)
                        found = (await retrying(lambda: consumer.committed([tp])))[tp]
                        committed_after_kill.append(None if found is None else found.offset)
                        await asyncio.to_thread(_produce, cluster, "events", 20, 10)
            while True:  # commit what is read; a rejoin may rewind to the commit at 10
                try:
                    await consumer.commit()
                    committed = (await consumer.committed([tp]))[tp]
                except KafkaError:
                    committed = None
                if committed is not None and committed.offset == 30:
                    break
                assert time.monotonic() < deadline, committed
                got.extend(record.value or b"" for record in await consumer.poll(200))
        return got, committed.offset

    got, committed = asyncio.run(consume())
    assert committed_after_kill == [10]
    assert set(got) == {f"m{i}".encode() for i in range(30)}
    # only records after the commit at 10 may come twice (the uncommitted window)
    assert [v for v in got if v in {f"m{i}".encode() for i in range(10)}] == got[:10]
    assert committed == 30
    new = _coordinator(cluster, "audit", other_than=old)
    assert _fetch(cluster.nodes[new].broker_port, "audit", "events") == (0, 30)


def test_a_broker_that_is_not_the_coordinator_answers_not_coordinator(
    cluster: LocalCluster,
) -> None:
    _create(cluster, "t")
    coordinator = _coordinator(cluster, "g")
    assert _commit(cluster.nodes[coordinator].broker_port, "g", "t", 3) == 0
    for node_id, node in cluster.nodes.items():
        if node_id == coordinator:
            continue
        port = node.broker_port
        # FindCoordinator v4 (KIP-699): a batch of keys, one answer each, all the leader
        batch = {"key_type": 0, "coordinator_keys": ["g", "h"]}
        answers = _send(port, ApiKey.FIND_COORDINATOR, batch, 4)["coordinators"]
        assert [(a["key"], a["error_code"], a["node_id"]) for a in answers] == [
            ("g", 0, coordinator),
            ("h", 0, coordinator),
        ]
        assert _commit(port, "g", "t", 7) == ErrorCode.NOT_COORDINATOR
        assert _fetch(port, "g", "t")[0] == ErrorCode.NOT_COORDINATOR
        heartbeat = {"group_id": "g", "generation_id": 1, "member_id": "m"}
        assert _send(port, ApiKey.HEARTBEAT, heartbeat, 2)["error_code"] == (
            ErrorCode.NOT_COORDINATOR
        )
        join = {
            "group_id": "g",
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        }
        assert _send(port, ApiKey.JOIN_GROUP, join, 5)["error_code"] == ErrorCode.NOT_COORDINATOR
    assert _fetch(cluster.nodes[coordinator].broker_port, "g", "t") == (0, 3)


def test_a_commit_without_min_insync_replicas_fails_retriably_and_loses_nothing(
    tmp_path: Path,
) -> None:
    cluster = _start(tmp_path, **{"min.insync.replicas": "3"})
    try:
        _create(cluster, "t")
        coordinator = _coordinator(cluster, "g")
        port = cluster.nodes[coordinator].broker_port
        assert _commit(port, "g", "t", 5) == 0
        other = next(n for n in sorted(cluster.nodes) if n != coordinator)
        cluster.nodes[other].kill()
        _wait_offsets_isr(cluster, sorted(set(cluster.nodes) - {other}))

        assert _commit(port, "g", "t", 9) == ErrorCode.COORDINATOR_NOT_AVAILABLE  # retriable
        assert _fetch(port, "g", "t") == (0, 5)

        cluster.nodes[other].start()
        cluster.wait_registered()
        _wait_offsets_isr(cluster, [1, 2, 3])
        assert _commit(port, "g", "t", 9) == 0
        assert _fetch(port, "g", "t") == (0, 9)
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        for node in cluster.nodes.values():
            node.kill(signal.SIGKILL)


def test_offsets_topic_waits_for_its_replication_factor_of_brokers(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, **{"broker.heartbeat.interval.ms": "500"})
    try:
        for node_id in (1, 2):  # a quorum, but two brokers of three
            cluster.nodes[node_id].start()
        cluster.wait_registered()
        find = {"key": "g", "key_type": 0}
        answer = _send(cluster.nodes[1].broker_port, ApiKey.FIND_COORDINATOR, find, 2)
        assert answer["error_code"] == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert answer["error_message"] == (
            "__consumer_offsets needs 3 unfenced brokers "
            "(offsets.topic.replication.factor), only [1, 2] are"
        )
        assert "not creating __consumer_offsets yet" in cluster.nodes[1].log_text()

        cluster.nodes[3].start()
        cluster.wait_registered()
        _coordinator(cluster, "g")
        _wait_offsets_isr(cluster, [1, 2, 3])
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        for node in cluster.nodes.values():
            node.kill(signal.SIGKILL)
