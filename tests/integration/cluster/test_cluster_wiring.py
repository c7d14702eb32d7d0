"""Three ``sluice broker`` processes as one cluster: quorum, controller, brokers and ISR wired.

Real processes (``harness.cluster.LocalCluster``: ``sluice broker <file>`` per node,
each a broker and a controller voter), real clients (kcat, librdkafka through
confluent_kafka), real ``kill -9``.
"""

from __future__ import annotations

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
from log_engine.client.quorum import describe_quorum_sync

SESSION_TIMEOUT_MS = 3000


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    nodes = LocalCluster(
        tmp_path,
        **{
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "3000",
        },
    ).start()
    try:
        nodes.wait_registered()
        yield nodes
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for node in nodes.nodes.values():
            node.kill(signal.SIGKILL)


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
