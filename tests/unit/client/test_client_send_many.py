"""Sending many records at once: same bytes and order as one by one, one future per run."""

from __future__ import annotations

import itertools
import random

import pytest

from log_engine.client import SyncConsumer, SyncProducer, TopicPartition
from log_engine.client.accumulator import AppendResult, RecordAccumulator
from log_engine.client.config import ProducerConfig
from log_engine.client.errors import KafkaError
from log_engine.client.partitioner import StickyPartitioner, partition_for_key
from log_engine.client.producer_batch import ProducerBatch
from log_engine.client.types import TopicPartition as TP
from log_engine.errors import ErrorCode
from log_engine.records.compression import Compression

VALUES = [f"{n:06d} {'x' * n}".encode() for n in range(40)]


def _batch(limit: int = 1 << 20) -> ProducerBatch:
    return ProducerBatch(TP("t", 0), 1000, limit, limit)


def test_append_run_writes_the_bytes_append_writes() -> None:
    keys = [None if n % 3 else f"k{n}".encode() for n in range(len(VALUES))]
    headers = [[("h", b"v")] if n % 5 == 0 else None for n in range(len(VALUES))]
    stamps = [1000 + n * 7 for n in range(len(VALUES))]
    one_by_one, together = _batch(), _batch()
    for n, value in enumerate(VALUES):
        one_by_one.append(keys[n], value, headers[n], stamps[n], None)
    stop, future = together.append_run(keys, VALUES, headers, stamps, 0, 0, len(VALUES))
    assert stop == len(VALUES) and future is not None
    one_by_one.seal(Compression.NONE)
    together.seal(Compression.NONE)
    assert together.wire == one_by_one.wire
    assert together.timestamps == stamps


def test_records_sharing_a_headers_object_encode_as_separate_ones() -> None:
    shared = [("mqtt.qos", b"0"), ("mqtt.retained", b"false")]
    other = [("h", None)]
    headers = [shared, shared, other, shared, None, shared, [("mqtt.qos", b"0")]]
    values = VALUES[: len(headers)]
    one_by_one, together = _batch(), _batch()
    for n, value in enumerate(values):
        one_by_one.append(None, value, list(headers[n] or []) or None, 1000, None)
    stop, _ = together.append_run(None, values, headers, None, 1000, 0, len(values))
    assert stop == len(values)
    one_by_one.seal(Compression.NONE)
    together.seal(Compression.NONE)
    assert together.wire == one_by_one.wire


def test_append_run_of_values_only_writes_the_bytes_append_writes() -> None:
    values: list[bytes | None] = list(VALUES)
    values[7] = None  # a tombstone in the middle leaves the values-only loop
    one_by_one, together = _batch(), _batch()
    for value in values:
        one_by_one.append(None, value, None, 1003, None)
    stop, future = together.append_run(None, values, None, None, 1003, 0, len(values))
    assert stop == len(values) and future is not None and future.record_count == len(values)
    one_by_one.seal(Compression.NONE)
    together.seal(Compression.NONE)
    assert together.wire == one_by_one.wire


def test_append_run_stops_at_a_full_batch_and_an_empty_batch_takes_one() -> None:
    batch = _batch(limit=61 + 300)  # header + about two 120-byte records
    big = [b"y" * 120] * 5
    stop, future = batch.append_run(None, big, None, None, 1000, 0, 5)
    assert stop == 2 and future is not None and future.record_count == 2
    assert batch.size_bytes + 61 <= 361
    huge = _batch(limit=100)
    stop, _ = huge.append_run(None, [b"z" * 500, b"z"], None, None, 1000, 0, 2)
    assert stop == 1  # alone it goes, even past the limit


def test_segment_future_resolves_to_each_records_metadata() -> None:
    batch = _batch()
    batch.append(None, b"first", None, 1000, None)
    _, future = batch.append_run(None, [b"a", b"b", b"c"], None, None, 1005, 0, 3)
    assert future is not None and not future.done()
    batch.complete(base_offset=40, log_append_time=-1)
    metadata = future.result(timeout=1)
    assert [(m.offset, m.timestamp) for m in metadata] == [(41, 1005), (42, 1005), (43, 1005)]
    failed = _batch()
    _, failing = failed.append_run(None, [b"a"], None, None, 1000, 0, 1)
    assert failing is not None
    failed.fail(RuntimeError("refused"))
    assert isinstance(failing.exception(timeout=1), RuntimeError)


def _accumulator(**overrides: str) -> RecordAccumulator:
    config = ProducerConfig.from_mapping({"bootstrap.servers": "h:1", **overrides})
    return RecordAccumulator(config, StickyPartitioner(random.Random(0)))


def test_a_run_fills_batches_in_order_with_contiguous_segments() -> None:
    acc = _accumulator(**{"batch.size": "1000"})
    values = [b"v" * 90] * 50
    result, stop, segments = acc.try_append_run(
        "t", 1, None, values, None, None, 0, 0, len(values), 2, [0, 1]
    )
    assert result is AppendResult.NEW_BATCH and stop == 50
    assert segments[0][0] == 0 and segments[-1][1] == 50
    assert all(a[1] == b[0] for a, b in itertools.pairwise(segments))
    assert len(segments) > 1  # 50 records of ~100 bytes do not fit one 1000-byte batch
    assert all(s[2].record_count == s[1] - s[0] for s in segments)


def test_a_run_stops_when_buffer_memory_runs_out() -> None:
    acc = _accumulator(**{"batch.size": "1000", "buffer.memory": "3000"})
    values = [b"v" * 90] * 100
    result, stop, segments = acc.try_append_run(
        "t", 0, None, values, None, None, 0, 0, len(values), 2, [0, 1]
    )
    assert result is AppendResult.NO_MEMORY
    assert 0 < stop < 100 and segments[-1][1] == stop  # what was appended is accounted for


# -- through a broker ----------------------------------------------------------------------


def _read(bootstrap: str, topic: str, partition: int, count: int) -> list[tuple[bytes | None, ...]]:
    consumer = SyncConsumer({"bootstrap.servers": bootstrap})
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        out: list[tuple[bytes | None, ...]] = []
        for _ in range(100):
            out += [(r.key, r.value) for r in consumer.poll(0.5)]
            if len(out) >= count:
                break
        return out
    finally:
        consumer.close()


def test_send_many_keeps_order_and_routes_keys(broker: object, topic_name: str) -> None:
    bootstrap = broker.bootstrap  # type: ignore[attr-defined]
    values = [f"value-{n}".encode() for n in range(3000)]
    keys = [f"key-{n % 7}".encode() for n in range(3000)]
    with SyncProducer({"bootstrap.servers": bootstrap, "batch.size": "4096"}) as producer:
        plain = producer.send_many(topic_name, values)
        assert plain.error is None and plain.sent == 3000
        assert plain.segments[0].start == 0 and plain.segments[-1].stop == 3000
        for segment in plain.segments:
            metadata = segment.future.result(timeout=30)
            assert len(metadata) == segment.stop - segment.start
        keyed = producer.send_many(topic_name + "-k", values, keys=keys)
        assert keyed.error is None and keyed.sent == 3000
        producer.flush(30)
        partitions = producer.partitions_for(topic_name + "-k")
    assert [v for _, v in _read(bootstrap, topic_name, 0, 3000)] == values
    for partition in partitions:
        expected = [
            (k, v) for k, v in zip(keys, values, strict=True)
            if partition_for_key(k, len(partitions)) == partition
        ]
        assert _read(bootstrap, topic_name + "-k", partition, len(expected)) == expected


def test_send_many_stops_at_a_bad_record_and_keeps_the_ones_before(
    broker: object, topic_name: str
) -> None:
    bootstrap = broker.bootstrap  # type: ignore[attr-defined]
    config = {"bootstrap.servers": bootstrap, "max.request.size": "10000"}
    with SyncProducer(config) as producer:
        values = [b"a", b"b", b"c" * 20000, b"d"]
        result = producer.send_many(topic_name, values)
        assert result.sent == 2
        assert isinstance(result.error, KafkaError)
        assert result.error.errno == ErrorCode.MESSAGE_TOO_LARGE
        assert "max.request.size" in str(result.error)
        bad_partition = producer.send_many(topic_name, [b"e", b"f"], partitions=[0, 99])
        assert bad_partition.sent == 1 and "partition 99" in str(bad_partition.error)
        with pytest.raises(ValueError, match="keys has 1 entries"):
            producer.send_many(topic_name, [b"g", b"h"], keys=[b"k"])
        producer.flush(30)
    assert [v for _, v in _read(bootstrap, topic_name, 0, 3)] == [b"a", b"b", b"e"]
