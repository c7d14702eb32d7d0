"""confluent-kafka (librdkafka 2.x) against a Sluice broker process."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.broker_process import BrokerProcess

pytestmark = pytest.mark.compat


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    futures[name].result(timeout=30)


def produce(
    bootstrap: str, topic: str, messages: list[tuple[bytes, bytes]], **conf: object
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    failures: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    for key, value in messages:
        producer.produce(topic, value, key, headers=[("h", key)], on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert failures == []


def consume_all(bootstrap: str, topic: str, expected: int, group: str) -> list[tuple[bytes, bytes]]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    received: list[tuple[bytes, bytes]] = []
    deadline = time.monotonic() + 60
    try:
        while len(received) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(10_000, timeout=1.0):
                assert msg.error() is None, msg.error()
                assert msg.headers() == [("h", msg.key())]
                received.append((msg.key(), msg.value()))
    finally:
        consumer.close()
    return received


@pytest.mark.parametrize("compression", ["lz4", "zstd", "snappy", "gzip"])
def test_idempotent_acks_all_producer_round_trip(
    broker: BrokerProcess, topic_name: str, compression: str
) -> None:
    create_topic(broker.bootstrap, topic_name, 3)
    messages = [(b"k%d" % i, b"value-%d" % i * 3) for i in range(20_000)]
    produce(
        broker.bootstrap,
        topic_name,
        messages,
        acks="all",
        **{
            "enable.idempotence": True,
            "compression.type": compression,
        },
    )
    received = consume_all(broker.bootstrap, topic_name, len(messages), f"g-{topic_name}")
    assert sorted(received) == sorted(messages)


def _poll_until(consumers: list[Consumer], done: Callable[[], bool], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "group did not settle"
        for consumer in consumers:
            consumer.poll(0.1)


def test_group_rebalances_when_members_join_and_leave(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker.bootstrap, topic_name, 4)
    conf = {
        "bootstrap.servers": broker.bootstrap,
        "group.id": f"g-{topic_name}",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
    }
    assigned: dict[str, set[int]] = {"a": set(), "b": set()}

    def tracker(name: str) -> dict[str, Callable[..., None]]:
        def on_assign(_c: Consumer, parts: list[TopicPartition]) -> None:
            assigned[name] = {p.partition for p in parts}

        def on_revoke(_c: Consumer, _parts: list[TopicPartition]) -> None:
            assigned[name] = set()

        return {"on_assign": on_assign, "on_revoke": on_revoke}

    a, b = Consumer(conf), Consumer(conf)
    a.subscribe([topic_name], **tracker("a"))
    _poll_until([a], lambda: assigned["a"] == {0, 1, 2, 3})
    b.subscribe([topic_name], **tracker("b"))
    _poll_until([a, b], lambda: len(assigned["a"]) == 2 and len(assigned["b"]) == 2)
    assert assigned["a"] | assigned["b"] == {0, 1, 2, 3}
    b.close()
    _poll_until([a], lambda: assigned["a"] == {0, 1, 2, 3})
    a.close()


def test_committed_offsets_survive_broker_restart(
    fresh_broker: Callable[..., BrokerProcess], topic_name: str
) -> None:
    server = fresh_broker()
    create_topic(server.bootstrap, topic_name, 1)
    produce(server.bootstrap, topic_name, [(b"k%d" % i, b"v%d" % i) for i in range(100)])
    group = f"g-{topic_name}"
    consumer = Consumer({"bootstrap.servers": server.bootstrap, "group.id": group})
    consumer.commit(offsets=[TopicPartition(topic_name, 0, 42)], asynchronous=False)
    consumer.close()

    server.restart()
    consumer = Consumer(
        {"bootstrap.servers": server.bootstrap, "group.id": group, "auto.offset.reset": "earliest"}
    )
    committed = consumer.committed([TopicPartition(topic_name, 0)], timeout=30)
    assert committed[0].offset == 42
    consumer.subscribe([topic_name])
    deadline = time.monotonic() + 60
    first = None
    while first is None and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and msg.error() is None:
            first = msg
    consumer.close()
    assert first is not None and first.offset() == 42 and first.value() == b"v42"
