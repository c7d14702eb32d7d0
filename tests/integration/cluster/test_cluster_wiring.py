"""Three ``sluice broker`` processes as one cluster: quorum, controller, brokers and ISR wired.

Real processes (``harness.cluster.LocalCluster``: ``sluice broker <file>`` per node,
each a broker and a controller voter), real clients (kcat, librdkafka through
confluent_kafka), real ``kill -9``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import LocalCluster
from harness.wait import wait_for
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.quorum import describe_quorum_sync
from log_engine.protocol import ApiKey

SESSION_TIMEOUT_MS = 3000


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path,
        **{
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "3000",
        },
    ).running() as nodes:
        yield nodes


def _create(cluster: LocalCluster, name: str, rf: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic(name, 1, rf, config=configs)], operation_timeout=30)
    futures[name].result(timeout=60)


def _partition(cluster: LocalCluster, topic: str) -> dict[str, Any]:
    """The topic's one partition in kcat's Metadata (a broker's image may lag others' by
    a moment: asked again until the broker asked knows it)."""

    def ask() -> dict[str, Any] | None:
        (entry,) = [t for t in cluster.metadata(topic)["topics"] if t["topic"] == topic]  # type: ignore[attr-defined]
        return dict(entry["partitions"][0]) if entry["partitions"] else None

    return wait_for(ask, f"{topic} in Metadata")


def _replicas(p: dict[str, Any]) -> list[int]:
    return sorted(r["id"] for r in p["replicas"])


def _isr(p: dict[str, Any]) -> list[int]:
    return sorted(r["id"] for r in p["isrs"])


def test_brokers_register_and_a_replicated_topic_shows_leader_replicas_and_isr(
    cluster: LocalCluster,
) -> None:
    assert cluster.live_broker_ids() == [1, 2, 3]
    _create(cluster, "rf3", 3, **{"min.insync.replicas": "2"})
    wait_for(lambda: _isr(_partition(cluster, "rf3")) == [1, 2, 3], "rf3's ISR of three")
    p = _partition(cluster, "rf3")
    assert _replicas(p) == [1, 2, 3]
    assert p["leader"] in (1, 2, 3)


def test_a_replication_factor_above_the_live_brokers_is_refused_clearly(
    cluster: LocalCluster,
) -> None:
    with pytest.raises(KafkaException) as raised:
        _create(cluster, "too-many", 4)
    error = raised.value.args[0]
    assert error.name() == "INVALID_REPLICATION_FACTOR"
    assert "replication factor 4 is larger than the 3 unfenced broker(s)" in error.str()


def test_acked_records_survive_a_killed_leader_and_the_isr_heals(cluster: LocalCluster) -> None:
    _create(cluster, "orders", 3, **{"min.insync.replicas": "2"})
    _survive_a_killed_leader(cluster)


@pytest.mark.nemesis  # long: tests/fault's short run kills the leader and controller too
def test_acked_records_survive_killing_the_leader_that_is_also_the_active_controller(
    cluster: LocalCluster,
) -> None:
    controller = describe_quorum_sync("127.0.0.1", cluster.nodes[1].controller_port).leader_id
    others = [n for n in sorted(cluster.nodes) if n != controller]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic(
        "orders",
        num_partitions=1,
        replica_assignment=[[controller, *others]],
        config={"min.insync.replicas": "2"},
    )
    admin.create_topics([topic], operation_timeout=30)["orders"].result(timeout=60)
    assert _partition(cluster, "orders")["leader"] == controller
    _survive_a_killed_leader(cluster)


def _survive_a_killed_leader(cluster: LocalCluster) -> None:
    wait_for(lambda: _isr(_partition(cluster, "orders")) == [1, 2, 3], "ISR of 3")
    acked: list[bytes] = []
    errors: list[str] = []

    def delivered(err: Any, msg: Any) -> None:
        if err is None:
            acked.append(msg.value())
        else:
            errors.append(str(err))

    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "message.timeout.ms": 60_000,
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    sent = 0

    def produce(count: int) -> None:
        nonlocal sent
        for _ in range(count):
            producer.produce("orders", f"record-{sent:06d}".encode(), on_delivery=delivered)
            sent += 1
            producer.poll(0)
            time.sleep(0.002)

    produce(300)
    producer.flush(30)
    assert len(acked) == 300
    leader = _partition(cluster, "orders")["leader"]
    cluster.nodes[leader].kill(signal.SIGKILL)
    produce(300)
    assert producer.flush(60) == 0, "every record delivered or failed"
    assert errors == []
    # the dead broker is fenced after broker.session.timeout.ms and leaves the ISR
    survivors = sorted(set(cluster.nodes) - {leader})
    cluster.wait_registered(survivors)
    wait_for(
        lambda: _isr(_partition(cluster, "orders")) == survivors, f"broker {leader} out of the ISR"
    )
    # it restarts, catches up, and the ISR is three again
    cluster.nodes[leader].start()
    cluster.wait_registered([1, 2, 3], timeout_s=90)
    wait_for(lambda: _isr(_partition(cluster, "orders")) == [1, 2, 3], "the ISR back to 3")
    # every acknowledged record, once, in order, from each broker
    for node in cluster.nodes.values():
        assert _read_all(node.bootstrap, "orders") == acked, f"read from node {node.node_id}"


def _read_all(bootstrap: str, topic: str) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{time.monotonic_ns()}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(values) < high and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
    consumer.close()
    return values


@pytest.mark.nemesis  # long: tests/fault's short run kills the leader and controller too
def test_a_killed_active_controller_is_replaced_and_its_broker_fenced(
    cluster: LocalCluster,
) -> None:
    first = cluster.nodes[1]
    leader = describe_quorum_sync("127.0.0.1", first.controller_port).leader_id
    cluster.nodes[leader].kill(signal.SIGKILL)
    survivors = sorted(set(cluster.nodes) - {leader})
    cluster.wait_registered(survivors)
    _create(cluster, "after-failover", 2)
    assert _replicas(_partition(cluster, "after-failover")) == survivors
    with pytest.raises(KafkaException) as raised:
        _create(cluster, "three-of-two", 3)
    assert raised.value.args[0].name() == "INVALID_REPLICATION_FACTOR"


def test_sigterm_moves_leadership_away_before_the_process_stops(tmp_path: Path) -> None:
    # a session far longer than the wait: only a controlled shutdown can move the leader
    nodes = LocalCluster(tmp_path, **{"broker.session.timeout.ms": "600000"}).start()
    try:
        nodes.wait_registered()
        _create(nodes, "moving", 3)
        wait_for(lambda: _isr(_partition(nodes, "moving")) == [1, 2, 3], "ISR of 3")
        leader = _partition(nodes, "moving")["leader"]
        assert nodes.nodes[leader].kill(signal.SIGTERM) == 0
        survivors = sorted(set(nodes.nodes) - {leader})
        nodes.wait_registered(survivors)
        p = _partition(nodes, "moving")
        assert p["leader"] in survivors
        assert _isr(p) == survivors
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for node in nodes.nodes.values():
            node.kill(signal.SIGKILL)


@pytest.mark.nemesis  # long: tests/fault's short run kills the leader and controller too
def test_a_node_restarted_within_its_old_session_registers_once_it_expires(
    cluster: LocalCluster,
) -> None:
    _create(cluster, "quick", 3)
    wait_for(lambda: _isr(_partition(cluster, "quick")) == [1, 2, 3], "ISR of 3")
    node = cluster.nodes[_partition(cluster, "quick")["leader"]]
    node.kill(signal.SIGKILL)
    node.start()
    cluster.wait_registered([1, 2, 3])
    wait_for(lambda: _isr(_partition(cluster, "quick")) == [1, 2, 3], "the ISR back to 3")
    assert "still has a session" in node.log_text()


def _produce_error(cluster: LocalCluster, topic: str) -> str | None:
    """The error of one acks=all record sent without retries (None: acknowledged)."""
    outcome: list[Any] = []
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "acks": "all", "retries": 0, "linger.ms": 0}
    )
    producer.produce(topic, b"x", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(30)
    (err,) = outcome
    return None if err is None else str(err.name())


def test_min_insync_replicas_comes_from_the_topic_config(cluster: LocalCluster) -> None:
    _create(cluster, "strict", 2, **{"min.insync.replicas": "3"})
    _create(cluster, "relaxed", 2, **{"min.insync.replicas": "2"})
    wait_for(lambda: len(_isr(_partition(cluster, "strict"))) == 2, "strict's ISR")
    wait_for(lambda: len(_isr(_partition(cluster, "relaxed"))) == 2, "relaxed's ISR")
    assert _produce_error(cluster, "strict") == "NOT_ENOUGH_REPLICAS"
    assert _produce_error(cluster, "relaxed") is None


def test_a_broker_only_node_registers_and_hosts_replicas(tmp_path: Path) -> None:
    nodes = LocalCluster(tmp_path, size=1, brokers_only=2).start()
    try:
        nodes.wait_registered([1, 2, 3])
        _create(nodes, "spread", 3)
        wait_for(lambda: _isr(_partition(nodes, "spread")) == [1, 2, 3], "ISR of 3")
        assert _produce_error(nodes, "spread") is None
        for node in nodes.nodes.values():
            assert _read_all(node.bootstrap, "spread") == [b"x"]
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for node in nodes.nodes.values():
            node.kill(signal.SIGKILL)


def test_a_consumer_group_reads_and_commits_at_one_coordinator(cluster: LocalCluster) -> None:
    # every broker names the same coordinator (each used to name itself: a group's
    # members, or one member's requests, could land on different brokers and get
    # UNKNOWN_MEMBER_ID)
    coordinators = {_find_coordinator(node.broker_port, "grp") for node in cluster.nodes.values()}
    assert len(coordinators) == 1
    _create(cluster, "grouped", 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(10):
        producer.produce("grouped", f"m{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": "grp",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(["grouped"])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(got) < 10 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    consumer.commit(asynchronous=False)
    (committed,) = consumer.committed([TopicPartition("grouped", 0)], timeout=10)
    consumer.close()
    assert got == [f"m{i}".encode() for i in range(10)]
    assert committed.offset == 10
    with pytest.raises(KafkaException) as raised:
        _create(cluster, "__consumer_offsets", 3)
    assert raised.value.args[0].name() == "TOPIC_EXCEPTION"  # librdkafka's name for 17


def _find_coordinator(port: int, group: str) -> int:
    async def ask() -> int:
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        try:
            body = await connection.send(
                ApiKey.FIND_COORDINATOR, {"key": group, "key_type": 0}, version=2
            )
        finally:
            connection.close()
        return int(body["node_id"]) if body["error_code"] == 0 else 0

    # COORDINATOR_NOT_AVAILABLE while __consumer_offsets is created and loaded: retried
    return wait_for(lambda: asyncio.run(ask()), f"the coordinator of {group}")


def test_describe_configs_of_a_topic_hosted_on_another_broker(cluster: LocalCluster) -> None:
    # a distributed worker checks its config topic's cleanup.policy through any broker
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic("solo", 1, replica_assignment=[[1]], config={"cleanup.policy": "compact"})
    admin.create_topics([topic], operation_timeout=30)["solo"].result(timeout=60)

    async def describe() -> dict[str, Any]:
        port = cluster.nodes[2].broker_port
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        resource = {"resource_type": 2, "resource_name": "solo", "configuration_keys": None}
        body = {"resources": [resource]}
        try:
            (result,) = (await connection.send(ApiKey.DESCRIBE_CONFIGS, body, version=1))["results"]
        finally:
            connection.close()
        return dict(result)

    result = wait_for(lambda: (r := asyncio.run(describe()))["error_code"] == 0 and r, "configs")
    configs = {c["name"]: c["value"] for c in result["configs"]}
    assert configs["cleanup.policy"] == "compact"
    assert configs["retention.ms"] == "604800000"  # the broker's default
