"""Reading back what a pipeline wrote to the broker, for assertions."""

from __future__ import annotations

import time

from harness.broker_process import BrokerProcess
from harness.wait import WAIT_S
from log_engine.client import ConsumerRecord, SyncConsumer, TopicPartition


def read_all(
    broker: BrokerProcess, topic: str, count: int, timeout_s: float = WAIT_S
) -> list[ConsumerRecord]:
    """The first ``count`` records of partition 0 of ``topic`` (waits up to ``timeout_s``).

    Returns fewer when the time is up, so the caller's assertion shows what came.
    """
    consumer = SyncConsumer(
        {"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest"}
    )
    try:
        consumer.assign([TopicPartition(topic, 0)])
        records: list[ConsumerRecord] = []
        deadline = time.monotonic() + timeout_s
        while len(records) < count and time.monotonic() < deadline:
            records.extend(consumer.poll(0.5))
        return records
    finally:
        consumer.close()
