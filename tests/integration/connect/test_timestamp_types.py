"""A LogAppendTime topic's records reach sinks (and Spark) as LogAppendTime, with the broker's time.

The broker stamps such a topic's batches with its own clock; the consumer
reports the type per record, the runtime's SinkRecords carry it, and the
Spark source's ``timestampType`` column says 1 (Kafka's id).
"""

from __future__ import annotations

import time

import pytest

from connect_worker.converters import ByteArrayConverter, SimpleHeaderConverter
from connect_worker.runtime.conversion import RecordConverters
from connectors.api import TimestampType
from harness.broker_process import BrokerProcess
from log_engine.client import ConsumerRecord, SyncAdmin, SyncConsumer, SyncProducer, TopicPartition
from spark_sinks.log_access import to_arrow

OLD_MS = 1_000_000  # a producer timestamp long before now


def _produce_and_read(
    broker: BrokerProcess, topic: str, timestamp_type: str
) -> list[ConsumerRecord]:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic, 1, 1, {"message.timestamp.type": timestamp_type})
    producer = SyncProducer({"bootstrap.servers": broker.bootstrap})
    try:
        for n in range(3):
            producer.send(topic, f"v{n}".encode(), timestamp_ms=OLD_MS + n)
        producer.flush()
    finally:
        producer.close()
    records: list[ConsumerRecord] = []
    with SyncConsumer({"bootstrap.servers": broker.bootstrap}) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        for _ in range(50):
            records += consumer.poll(0.2)
            if len(records) >= 3:
                break
    assert len(records) == 3
    return records


def _converters() -> RecordConverters:
    key, value, header = ByteArrayConverter(), ByteArrayConverter(), SimpleHeaderConverter()
    key.configure({}, True)
    value.configure({}, False)
    header.configure({})
    return RecordConverters(key, value, header)


@pytest.mark.parametrize(
    ("config", "kafka_id", "sink_type"),
    [("CreateTime", 0, TimestampType.CREATE_TIME),
     ("LogAppendTime", 1, TimestampType.LOG_APPEND_TIME)],
)
def test_the_timestamp_type_travels_from_the_batch_to_sinks_and_spark(
    broker: BrokerProcess, topic_name: str, config: str, kafka_id: int, sink_type: TimestampType
) -> None:
    before_ms = int(time.time() * 1000) - 1000
    records = _produce_and_read(broker, f"{topic_name[:40]}-{config}", config)
    assert [r.timestamp_type for r in records] == [kafka_id] * 3
    if kafka_id == 1:
        assert all(r.timestamp >= before_ms for r in records)  # the broker's clock
    else:
        assert [r.timestamp for r in records] == [OLD_MS, OLD_MS + 1, OLD_MS + 2]

    converters = _converters()
    bulk = converters.to_sink_records(records)
    assert bulk is not None
    assert [r.timestamp_type for r in bulk] == [sink_type] * 3
    assert [converters.to_sink_record(r) for r in records] == bulk

    batch = to_arrow(records, include_headers=False)
    assert batch.column("timestampType").to_pylist() == [kafka_id] * 3
