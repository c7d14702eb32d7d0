"""Replication metrics of a three-node cluster (issue 20): real ``sluice broker``
processes (``LocalCluster(metrics=True)``), a follower killed with ``kill -9``, each
node's ``GET /metrics`` parsed with prometheus_client's parser."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import ClusterNode, LocalCluster
from harness.prometheus import scrape
from harness.wait import wait_for

TOPIC = "orders"
REPLICA_MANAGER = "kafka_server_replicamanager_"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path,
        metrics=True,
        **{
            "broker.session.timeout.ms": "3000",
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "2000",
        },
    ).running() as nodes:
        yield nodes


def _metric(node: ClusterNode, name: str) -> float | None:
    return scrape(node.metrics_url).value(name)


def _partition(cluster: LocalCluster) -> dict[str, Any] | None:
    topics = [t for t in cluster.metadata(TOPIC)["topics"] if t["topic"] == TOPIC]
    return dict(topics[0]["partitions"][0]) if topics and topics[0]["partitions"] else None


def _isr(cluster: LocalCluster) -> list[int]:
    partition = _partition(cluster)
    return sorted(r["id"] for r in partition["isrs"]) if partition else []


def test_a_killed_follower_shows_as_under_replicated_and_an_isr_shrink(
    cluster: LocalCluster,
) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 3)], operation_timeout=30)[TOPIC].result(60)
    wait_for(lambda: _isr(cluster) == [1, 2, 3], "an ISR of 3")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(100):
        producer.produce(TOPIC, f"order-{i}".encode())
    assert producer.flush(30) == 0
    partition = _partition(cluster)
    assert partition is not None
    leader = cluster.nodes[partition["leader"]]
    controllers = [
        n for n, node in cluster.nodes.items()
        if _metric(node, "kafka_controller_kafkacontroller_activecontrollercount") == 1
    ]
    assert len(controllers) == 1, "exactly one active controller reports 1"
    # a follower that is not the active controller: no election, just a lost replica
    follower = next(
        node for n, node in cluster.nodes.items() if n not in (leader.node_id, controllers[0])
    )
    assert _metric(leader, REPLICA_MANAGER + "underreplicatedpartitions") == 0
    assert _metric(leader, REPLICA_MANAGER + "isrshrinks_total") == 0
    assert (_metric(leader, REPLICA_MANAGER + "leadercount") or 0) >= 1

    follower.kill(signal.SIGKILL)
    wait_for(
        lambda: _metric(leader, REPLICA_MANAGER + "underreplicatedpartitions") == 1,
        "the leader to report its partition under-replicated",
    )
    assert (_metric(leader, REPLICA_MANAGER + "isrshrinks_total") or 0) >= 1
    page = scrape(leader.metrics_url)
    assert page.value("kafka_cluster_partition_underreplicated", topic=TOPIC, partition="0") == 1
    assert (page.value("kafka_server_brokertopicmetrics_replicationbytesout_total") or 0) > 0
    requests = "kafka_network_requestmetrics_requests_total"
    assert page.total(requests, request="FetchFollower") > 0  # the followers' fetches
    survivors = sorted(set(cluster.nodes) - {follower.node_id})
    wait_for(lambda: _isr(cluster) == survivors, "the ISR without the follower in Metadata")
    active = cluster.nodes[controllers[0]]
    assert _metric(active, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0

    # more records while it is away, then back again: it catches up (replication bytes
    # in), the ISR expands, nothing is under-replicated
    for i in range(100, 150):
        producer.produce(TOPIC, f"order-{i}".encode())
    assert producer.flush(30) == 0
    follower.start()
    wait_for(
        lambda: _metric(leader, REPLICA_MANAGER + "underreplicatedpartitions") == 0,
        "the ISR whole again",
        90,
    )
    assert (_metric(leader, REPLICA_MANAGER + "isrexpands_total") or 0) >= 1
    page = scrape(follower.metrics_url)
    assert page.value("kafka_log_log_logendoffset", topic=TOPIC, partition="0") == 150
    assert (page.value("kafka_server_brokertopicmetrics_replicationbytesin_total") or 0) > 0
    assert _metric(leader, "kafka_server_brokertopicmetrics_messagesin_total") == 150
