"""A broker's ``GET /metrics`` (issue 20): a real ``sluice broker`` process, real clients
(librdkafka through confluent_kafka), the page parsed with prometheus_client's parser."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.broker_process import BrokerProcess, free_port
from harness.prometheus import Scrape, scrape
from harness.wait import wait_for

TOPIC = "orders"
GROUP = "billing"
PRODUCED = {0: 300, 1: 200}
COMMITTED = {0: 120, 1: 200}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    port = free_port()
    process = BrokerProcess(tmp_path / "data", **{"metrics.listeners": f"http://127.0.0.1:{port}"})
    process.metrics_url = f"http://127.0.0.1:{port}/metrics"  # type: ignore[attr-defined]
    process.start()
    try:
        yield process
    except BaseException:
        print(process.log_text())
        raise
    finally:
        process.stop()


def _produce(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for partition, count in PRODUCED.items():
        for i in range(count):
            producer.produce(TOPIC, f"order-{partition}-{i:04d}".encode(), partition=partition)
    assert producer.flush(30) == 0


def _consume_and_commit(bootstrap: str) -> int:
    """Read every record with a group member, then commit COMMITTED; the records read."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": GROUP,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([TOPIC])
    read = 0
    deadline = time.monotonic() + 60
    while read < sum(PRODUCED.values()) and time.monotonic() < deadline:
        for msg in consumer.consume(500, timeout=0.5):
            if msg.error() is None:
                read += 1
    consumer.commit(
        offsets=[TopicPartition(TOPIC, p, offset) for p, offset in COMMITTED.items()],
        asynchronous=False,
    )
    consumer.close()
    return read


def test_counters_log_sizes_and_group_lag_after_producing_and_consuming(
    broker: BrokerProcess,
) -> None:
    url = broker.metrics_url  # type: ignore[attr-defined]
    _produce(broker.bootstrap)
    assert _consume_and_commit(broker.bootstrap) == sum(PRODUCED.values())

    def scraped() -> Scrape | None:
        page = scrape(url)
        lag = page.value("kafka_consumergroup_lag", consumergroup=GROUP, topic=TOPIC, partition="0")
        return page if lag is not None else None

    page = wait_for(scraped, "the group's lag on /metrics")
    assert page is not None

    # BrokerTopicMetrics: messages and bytes in for the topic, bytes out to the consumer
    messages_in = "kafka_server_brokertopicmetrics_messagesin_total"
    assert page.value(messages_in, topic=TOPIC) == sum(PRODUCED.values())
    assert page.value(messages_in) == sum(PRODUCED.values())  # all topics: no label
    assert page.types["kafka_server_brokertopicmetrics_messagesin"] == "counter"
    sizes = {
        p: page.value("kafka_log_log_size", topic=TOPIC, partition=str(p)) for p in PRODUCED
    }
    log_bytes = sum(v or 0 for v in sizes.values())
    assert all(sizes.values()) and log_bytes > sum(PRODUCED.values()) * len("order-0-0000")
    assert page.value("kafka_server_brokertopicmetrics_bytesin_total", topic=TOPIC) == log_bytes
    bytes_out = page.value("kafka_server_brokertopicmetrics_bytesout_total", topic=TOPIC)
    assert bytes_out is not None and bytes_out >= log_bytes  # every batch read at least once
    for p, count in PRODUCED.items():
        assert page.value("kafka_log_log_logendoffset", topic=TOPIC, partition=str(p)) == count

    # RequestMetrics: counts per API (summed over versions) and total time quantiles
    requests = "kafka_network_requestmetrics_requests_total"
    produce_count = page.total(requests, request="Produce")
    assert produce_count >= 1
    assert page.total(requests, request="Fetch") >= 1
    assert page.total(requests, request="FetchConsumer") == page.total(requests, request="Fetch")
    assert page.total(requests, request="OffsetCommit") >= 1
    time_ms = "kafka_network_requestmetrics_totaltimems"
    assert page.types[time_ms] == "summary"
    assert page.value(time_ms + "_count", request="Produce") == produce_count
    p50 = page.value(time_ms, request="Produce", quantile="0.50")
    p99 = page.value(time_ms, request="Produce", quantile="0.99")
    assert p50 is not None and p99 is not None and 0 < p50 <= p99

    # the group's lag per partition is what it has not committed
    for p, count in PRODUCED.items():
        labels = {"consumergroup": GROUP, "topic": TOPIC, "partition": str(p)}
        assert page.value("kafka_consumergroup_lag", **labels) == count - COMMITTED[p]
        assert page.value("kafka_consumergroup_current_offset", **labels) == COMMITTED[p]
    expected_lag = sum(PRODUCED[p] - COMMITTED[p] for p in PRODUCED)
    assert page.value("kafka_consumergroup_lag_sum", consumergroup=GROUP, topic=TOPIC) == (
        expected_lag
    )

    # a single node: every partition led here, none under-replicated or offline
    partitions = 2 + 3  # orders + __consumer_offsets (offsets.topic.num.partitions=3)
    assert page.value("kafka_server_replicamanager_partitioncount") == partitions
    assert page.value("kafka_server_replicamanager_leadercount") == partitions
    assert page.value("kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert page.value("kafka_controller_kafkacontroller_offlinepartitionscount") == 0


def _run_broker(tmp_path: Path, metrics_listeners: str) -> subprocess.CompletedProcess[str]:
    args = [
        sys.executable, "-m", "connect_worker.cli", "broker",
        "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
        "--override", f"log.dirs={tmp_path / 'data'}",
        "--override", f"metrics.listeners={metrics_listeners}",
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def test_a_bad_metrics_listener_stops_the_broker_with_a_clear_error(tmp_path: Path) -> None:
    result = _run_broker(tmp_path, "127.0.0.1:9404")
    assert result.returncode == 2
    assert "metrics.listeners" in result.stderr and "http://host:port" in result.stderr


def test_a_busy_metrics_port_stops_the_broker_with_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = _run_broker(tmp_path, f"http://127.0.0.1:{port}")
    assert result.returncode == 2
    assert f"cannot bind metrics.listeners http://127.0.0.1:{port}" in result.stderr
    assert "in use" in result.stderr
