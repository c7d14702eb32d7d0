"""kafka-python (pure Python) against a Sluice broker process."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from harness.broker_process import BrokerProcess

pytestmark = pytest.mark.compat


def test_round_trip(broker: BrokerProcess, topic_name: str) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for i in range(500):
        producer.send(topic_name, key=b"k%d" % i, value=b"v%d" % i, headers=[("n", b"%d" % i)])
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(
        topic_name,
        bootstrap_servers=broker.bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
        group_id=f"g-{topic_name}",
    )
    received = [(m.key, m.value, m.headers) for m in consumer]
    consumer.close()
    assert received == [(b"k%d" % i, b"v%d" % i, [("n", b"%d" % i)]) for i in range(500)]


def test_admin_create_and_delete_topics(broker: BrokerProcess, topic_name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic_name, num_partitions=3, replication_factor=1)])
        assert topic_name in admin.list_topics()
        described = admin.describe_topics([topic_name])
        assert len(described[0]["partitions"]) == 3
        admin.delete_topics([topic_name])
        assert topic_name not in admin.list_topics()
    finally:
        admin.close()


def test_admin_describe_log_dirs_reports_partition_sizes(
    broker: BrokerProcess, topic_name: str
) -> None:
    """kafka-python's describe_log_dirs (DescribeLogDirs) against our broker: the sizes
    are the bytes of the partition's segment files on disk."""
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for _ in range(50):
        producer.send(topic_name, value=b"x" * 100, partition=0)
    producer.flush(30)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        answers = admin.describe_log_dirs([topic_name])
    finally:
        admin.close()
    assert len(answers) == 1
    (log_dir,) = answers[0]["log_dirs"]
    assert log_dir["error_code"] == 0
    assert log_dir["log_dir"] == str(broker.data_dir.resolve())
    (topic,) = [t for t in log_dir["topics"] if t["name"] == topic_name]
    on_disk = sum(f.stat().st_size for f in (broker.data_dir / f"{topic_name}-0").glob("*.log"))
    assert on_disk > 50 * 100
    assert [(p["partition_index"], p["partition_size"]) for p in topic["partitions"]] == [
        (0, on_disk)
    ]
