"""Raw access to a topic with confluent_kafka (librdkafka), a client that is not ours.

The format tests read what our stores wrote as plain bytes, and write records
as a Kafka Connect worker would, through this client.
"""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

RawRecord = tuple[int, bytes | None, bytes | None]  # partition, key, value


def read_all(bootstrap: str, topic: str, partitions: int) -> list[RawRecord]:
    """Every record of ``topic`` as (partition, key, value), in each partition's order."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "raw-reader", "enable.auto.commit": False}
    )
    try:
        out: list[RawRecord] = []
        for p in range(partitions):
            tp = TopicPartition(topic, p)
            _low, high = consumer.get_watermark_offsets(tp, timeout=30)
            if high == 0:
                continue
            consumer.assign([TopicPartition(topic, p, 0)])
            read = 0
            while read < high:
                message = consumer.poll(10)
                assert message is not None, f"no record at {topic}-{p}@{read} within 10 s"
                assert message.error() is None, message.error()
                out.append((p, message.key(), message.value()))
                read = message.offset() + 1
        return out
    finally:
        consumer.close()


def write(bootstrap: str, topic: str, records: list[tuple[bytes, bytes | None]]) -> list[int]:
    """Produce ``records`` with Java's murmur2 partitioner; the partition of each."""
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    partitions: list[int] = []

    def delivered(error: object, message: object) -> None:
        assert error is None, error
        partitions.append(message.partition())  # type: ignore[attr-defined]

    for key, value in records:
        producer.produce(topic, value, key, on_delivery=delivered)
        producer.flush(30)
    assert len(partitions) == len(records)
    return partitions
