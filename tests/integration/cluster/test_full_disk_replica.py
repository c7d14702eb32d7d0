"""A disk that fills up on one node of three takes that node out of the ISR, not the
cluster down (issue 17's fault list).

Node 3's data directory is a small tmpfs. With node 3 leading the partition (the
hardest case: its writes are the ones that fail) the disk is filled while an
idempotent ``acks=all`` producer writes; every record is acknowledged, by node 3 or
by a new leader, the ISR shrinks to the two nodes with space, and once space is back
and node 3 runs again the ISR is three again and every replica holds each record once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import LocalCluster
from harness.wait import wait_for
from tests.support.small_fs import SmallFilesystem, mounted_or_fail

TOPIC = "orders"


@pytest.fixture
def cluster_with_small_disk(tmp_path: Path) -> Iterator[tuple[LocalCluster, SmallFilesystem]]:
    with mounted_or_fail(tmp_path / "small", 48 << 20) as small_fs:
        cluster = LocalCluster(
            tmp_path / "cluster",
            **{
                "broker.session.timeout.ms": "3000",
                "broker.heartbeat.interval.ms": "500",
                "replica.lag.time.max.ms": "3000",
            },
        )
        node3 = cluster.nodes[3]
        text = node3.properties.read_text()
        data3 = str(cluster.directory / "data3")
        node3.properties.write_text(text.replace(data3, str(small_fs.root / "data3")))
        with cluster.running():
            yield cluster, small_fs


def _partition(cluster: LocalCluster) -> dict[str, Any] | None:
    topics = [t for t in cluster.metadata(TOPIC)["topics"] if t["topic"] == TOPIC]
    partitions = topics[0]["partitions"] if topics else []
    return dict(partitions[0]) if partitions else None


def _isr(cluster: LocalCluster) -> list[int]:
    partition = _partition(cluster)
    return sorted(r["id"] for r in partition["isrs"]) if partition else []


def _read_all(bootstrap: str) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "full-disk-check", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        values: list[bytes] = []
        idle = 0
        while idle < 5:
            message = consumer.poll(1.0)
            if message is None:
                idle += 1
                continue
            if message.error() is None:
                values.append(message.value())
                idle = 0
        return values
    finally:
        consumer.close()


def test_a_full_disk_on_the_leader_takes_it_out_of_the_isr_not_the_cluster_down(
    cluster_with_small_disk: tuple[LocalCluster, SmallFilesystem],
) -> None:
    cluster, small_fs = cluster_with_small_disk
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic(TOPIC, num_partitions=1, replica_assignment=[[3, 1, 2]],
                     config={"min.insync.replicas": "2"})  # fmt: skip
    admin.create_topics([topic], operation_timeout=30)[TOPIC].result(timeout=60)
    wait_for(lambda: _isr(cluster) == [1, 2, 3], "an ISR of three")
    assert wait_for(lambda: _partition(cluster), "the partition in Metadata")["leader"] == 3

    acked: list[bytes] = []
    errors: list[str] = []

    def delivered(err: Any, msg: Any) -> None:
        (errors.append(str(err)) if err is not None else acked.append(msg.value()))

    producer = Producer({
        "bootstrap.servers": cluster.bootstrap, "enable.idempotence": True, "acks": "all",
        "linger.ms": 5, "message.timeout.ms": 120_000, "topic.metadata.refresh.interval.ms": 1000,
    })  # fmt: skip
    payload = b"x" * 2000
    sent = 0

    def produce(count: int) -> None:
        nonlocal sent
        for _ in range(count):
            producer.produce(TOPIC, b"%06d:" % sent + payload, on_delivery=delivered)
            sent += 1
            producer.poll(0)

    produce(200)
    assert producer.flush(60) == 0
    small_fs.fill()
    produce(400)  # node 3 cannot write these: the others must take over
    assert producer.flush(120) == 0, f"{len(errors)} errors, first: {errors[:1]}"
    assert not errors, errors[:3]
    assert len(acked) == sent
    wait_for(
        lambda: _isr(cluster) == [1, 2] and (_partition(cluster) or {}).get("leader") in (1, 2),
        "node 3 out of the ISR and leading no more",
    )
    assert "No space left on device" in cluster.nodes[3].log_text()
    assert "broker 3 must stop: its log dir" in cluster.nodes[3].log_text()

    # A node whose only disk failed stops, as Kafka's does. Its ISR seat moves during its
    # controlled shutdown, a moment before the process ends: wait for the end, or the
    # restart below is skipped and node 3 never comes back (seen in CI).
    wait_for(lambda: not cluster.nodes[3].is_alive(), "node 3 to stop")
    small_fs.free()
    cluster.nodes[3].start()
    produce(100)
    assert producer.flush(60) == 0 and not errors
    wait_for(lambda: _isr(cluster) == [1, 2, 3], "node 3 back in the ISR", timeout_s=90)
    values = _read_all(cluster.bootstrap)
    assert sorted(values) == sorted(acked)  # every acknowledged record, once
    assert [int(v.split(b":")[0]) for v in values] == list(range(sent))  # in order
