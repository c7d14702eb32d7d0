"""A partition error in a Fetch answer reaches librdkafka as the error it is.

Kafka sends an empty record set with a partition error; a null one (size -1)
makes librdkafka fail to parse the whole response ("invalid MessageSetSize
-1") and retry forever, so a consumer past the log end never sees
OFFSET_OUT_OF_RANGE and never applies ``auto.offset.reset``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import pytest

from harness.broker_process import BrokerProcess


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "data").start()
    yield process
    assert process.stop() == 0, process.log_text()


def test_offset_out_of_range_reaches_librdkafka(broker: BrokerProcess) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce("short", b"only")
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "g", "auto.offset.reset": "error"}
    )
    consumer.assign([confluent_kafka.TopicPartition("short", 0, 5)])
    try:
        error = None
        for _ in range(20):
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                error = message.error()
                break
    finally:
        consumer.close()
    assert error is not None, "no error: the Fetch answer did not parse"
    assert error.code() == confluent_kafka.KafkaError._AUTO_OFFSET_RESET
    assert "Offset out of range" in error.str()
