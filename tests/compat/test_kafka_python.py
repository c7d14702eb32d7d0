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
