"""The producer splits a batch the broker refuses as too large, as Kafka's producer does.

A topic with ``max.message.bytes=20000`` and the worker's producer settings (batches of
up to 256 KiB): every record is acknowledged once and lands once, in order; a record
too large on its own fails with an error naming the partition, its size and the limit,
while the records around it land. With and without idempotence, and with lz4.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Iterator

import pytest

from connect_worker.runtime.task_factory import PRODUCER_DEFAULTS
from harness.broker_process import BrokerProcess
from log_engine.client import (
    Producer,
    RecordMetadata,
    SyncAdmin,
    SyncConsumer,
    SyncProducer,
    TopicPartition,
)
from log_engine.client.admin_types import NewTopic
from log_engine.client.errors import KafkaError, PartialDeliveryError
from log_engine.errors import ErrorCode

LIMIT = 20000
RECORD_BYTES = 500
COUNT = 5000
PRODUCER_BATCH_BYTES = int(PRODUCER_DEFAULTS["batch.size"])


def _values(count: int, seed: int) -> list[bytes]:
    """Distinct, incompressible values (so a compressed batch stays too large)."""
    rng = random.Random(seed)
    return [b"%06d:" % n + rng.randbytes(RECORD_BYTES - 7) for n in range(count)]


def _topic(broker: BrokerProcess, name: str) -> str:
    """A topic of one partition with ``max.message.bytes=20000``, named after the test."""
    name = f"{name[:40]}-{uuid.uuid4().hex[:8]}"
    admin = SyncAdmin({"bootstrap.servers": broker.bootstrap})
    try:
        admin.create_topics([NewTopic(name, 1, 1, {"max.message.bytes": str(LIMIT)})])
    finally:
        admin.close()
    return name


def _producer(broker: BrokerProcess, **settings: str) -> SyncProducer:
    return SyncProducer({"bootstrap.servers": broker.bootstrap, **PRODUCER_DEFAULTS, **settings})


def _read_all(broker: BrokerProcess, topic: str) -> Iterator[tuple[int, bytes | None]]:
    """Every record of partition 0 as ``(offset, value)``, up to the log end."""
    consumer = SyncConsumer({"bootstrap.servers": broker.bootstrap})
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        end = consumer.end_offsets([tp])[tp]
        position = 0
        for _ in range(200):
            for record in consumer.poll(0.5):
                yield record.offset, record.value
                position = record.offset + 1
            if position >= end:
                return
        raise AssertionError(f"read {position} of {end} records of {topic}")
    finally:
        consumer.close()


def _splits(caplog: pytest.LogCaptureFixture) -> int:
    """How many refused batches the producer split (its log says so, once per split)."""
    return sum("as too large" in r.getMessage() for r in caplog.records if "split" in r.msg)


SETTINGS = {
    "idempotent": {"enable.idempotence": "true"},
    # Without sequence numbers, only one batch in flight keeps the order across retries
    # (Kafka's rule too: max.in.flight.requests.per.connection=1).
    "plain": {"enable.idempotence": "false", "max.in.flight.requests.per.connection": "1"},
    "idempotent-lz4": {"enable.idempotence": "true", "compression.type": "lz4"},
}


@pytest.mark.parametrize("settings", list(SETTINGS), ids=list(SETTINGS))
def test_batches_over_max_message_bytes_are_split_and_all_land_in_order(
    broker: BrokerProcess, topic_name: str, settings: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="log_engine.client.sender")
    topic = _topic(broker, topic_name)
    values = _values(COUNT, seed=1)
    with _producer(broker, **SETTINGS[settings]) as producer:
        futures = [producer.send(topic, value) for value in values]
        producer.flush(60)
        offsets = [future.result(timeout=0).offset for future in futures]
    assert offsets == list(range(COUNT))  # each acknowledged at the offset it landed at
    assert [value for _, value in _read_all(broker, topic)] == values
    assert _splits(caplog) >= COUNT * RECORD_BYTES // PRODUCER_BATCH_BYTES  # really split


def test_send_many_runs_spanning_split_batches_resolve_with_each_records_offset(
    broker: BrokerProcess, topic_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="log_engine.client.sender")
    topic = _topic(broker, topic_name)
    values = _values(COUNT, seed=2)
    with _producer(broker, **{"enable.idempotence": "true"}) as producer:
        result = producer.send_many(topic, values)
        assert result.error is None and result.sent == COUNT
        producer.flush(60)
        offsets = [m.offset for s in result.segments for m in s.future.result(timeout=0)]
    assert offsets == list(range(COUNT))
    assert [value for _, value in _read_all(broker, topic)] == values
    assert _splits(caplog) >= 1


@pytest.mark.parametrize("settings", ["idempotent", "plain"])
def test_a_record_too_large_alone_fails_clearly_and_its_neighbours_land(
    broker: BrokerProcess, topic_name: str, settings: str
) -> None:
    topic = _topic(broker, topic_name)
    values = _values(200, seed=3)
    values[100] = b"big:" + bytes(30000)
    with _producer(broker, **SETTINGS[settings]) as producer:
        futures = [producer.send(topic, value) for value in values]
        producer.flush(60)
        with pytest.raises(KafkaError) as failure:
            futures[100].result(timeout=0)
        delivered = [future.result(timeout=0).offset for n, future in enumerate(futures)
                     if n != 100]
        after = producer.send(topic, b"after").result(timeout=30)  # the producer goes on
    assert failure.value.errno == ErrorCode.MESSAGE_TOO_LARGE
    message = str(failure.value)
    assert f"producing to {topic}-0: a record of 300" in message  # 30,004 bytes of value
    assert "exceeds the topic's max.message.bytes=20000" in message
    assert delivered == list(range(199))
    landed = list(_read_all(broker, topic))
    assert [v for _, v in landed] == values[:100] + values[101:] + [b"after"]
    assert after.offset == 199


@pytest.mark.parametrize("settings", ["idempotent", "plain"])
def test_a_lone_batch_too_large_fails_while_later_batches_are_in_flight(
    broker: BrokerProcess, topic_name: str, settings: str
) -> None:
    """Small batches (16 KiB) fit; the big record is a batch of its own, followed by
    batches already sent: with idempotence they are renumbered to close its gap."""
    topic = _topic(broker, topic_name)
    values = _values(400, seed=4)
    values[50] = b"big:" + random.Random(5).randbytes(25000)
    idempotence = "true" if settings == "idempotent" else "false"  # 5 in flight either way
    config = {"enable.idempotence": idempotence, "batch.size": "16384"}
    with _producer(broker, **config) as producer:
        futures = [producer.send(topic, value) for value in values]
        producer.flush(60)
        error = futures[50].exception(timeout=0)
        offsets = [f.result(timeout=0).offset for n, f in enumerate(futures) if n != 50]
    assert isinstance(error, KafkaError) and error.errno == ErrorCode.MESSAGE_TOO_LARGE
    assert "a record of 250" in str(error) and "max.message.bytes=20000" in str(error)
    assert offsets == list(range(399))
    assert [v for _, v in _read_all(broker, topic)] == values[:50] + values[51:]


def test_send_many_run_holding_a_record_too_large_fails_and_the_rest_lands(
    broker: BrokerProcess, topic_name: str
) -> None:
    """The run holding it fails with a PartialDeliveryError naming, by position in the run,
    the record not delivered (its other records landed); the other runs succeed."""
    topic = _topic(broker, topic_name)
    values = _values(300, seed=6)
    values[150] = b"big:" + bytes(30000)
    with _producer(broker, **{"enable.idempotence": "true"}) as producer:
        result = producer.send_many(topic, values)
        producer.flush(60)
    assert result.error is None
    for start, stop, future in result.segments:
        if start <= 150 < stop:
            partial = future.exception(timeout=0)
            assert isinstance(partial, PartialDeliveryError)
            assert (list(partial.failed), partial.count) == ([150 - start], stop - start)
            error = partial.failed[150 - start]
            assert isinstance(error, KafkaError) and error.errno == ErrorCode.MESSAGE_TOO_LARGE
            assert f"producing to {topic}-0: a record of 300" in str(error)
            assert f"1 of {stop - start} records not delivered" in str(partial)
        else:
            assert len(future.result(timeout=0)) == stop - start
    assert [v for _, v in _read_all(broker, topic)] == values[:150] + values[151:]


def test_the_asyncio_producer_gets_each_records_own_result(
    broker: BrokerProcess, topic_name: str
) -> None:
    topic = _topic(broker, topic_name)
    values = _values(1000, seed=7)
    values[500] = b"big:" + bytes(30000)

    async def produce() -> list[asyncio.Future[RecordMetadata]]:
        config = {"bootstrap.servers": broker.bootstrap, **PRODUCER_DEFAULTS}
        async with Producer(config) as producer:
            futures = [await producer.send(topic, value) for value in values]
            await producer.flush()
        return futures

    futures = asyncio.run(produce())
    error = futures[500].exception()
    assert isinstance(error, KafkaError) and error.errno == ErrorCode.MESSAGE_TOO_LARGE
    offsets = [f.result().offset for n, f in enumerate(futures) if n != 500]
    assert offsets == list(range(999))
    assert [v for _, v in _read_all(broker, topic)] == values[:500] + values[501:]
