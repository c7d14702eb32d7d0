"""The record accumulator: batching, readiness, draining, memory bounds, retry order."""

from __future__ import annotations

import random
import time

from log_engine.client.accumulator import AppendResult, RecordAccumulator
from log_engine.client.cluster import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from log_engine.client.config import ProducerConfig
from log_engine.client.partitioner import StickyPartitioner
from log_engine.client.producer_batch import encoded_size
from log_engine.client.types import TopicPartition as TP

VALUE = b"x" * 100


def _metadata(leaders: dict[int, int]) -> ClusterMetadata:
    parts = {
        p: PartitionInfo("t", p, leader, 0, (leader,), (leader,)) for p, leader in leaders.items()
    }
    brokers = {n: BrokerInfo(n, "h", 9000 + n) for n in set(leaders.values()) if n >= 0}
    return ClusterMetadata(brokers, {"t": TopicInfo("t", 0, False, parts)})


def _accumulator(**overrides: object) -> RecordAccumulator:
    config = ProducerConfig.from_mapping({"bootstrap.servers": "h:1", **overrides})
    return RecordAccumulator(config, StickyPartitioner(random.Random(0)))


def _append(acc: RecordAccumulator, partition: int | None, value: bytes = VALUE) -> AppendResult:
    result, _ = acc.try_append(
        "t", partition, None, value, None, 0, None, encoded_size(None, value, None), 2, [0, 1]
    )
    return result


def test_records_fill_a_batch_before_a_new_one_starts() -> None:
    acc = _accumulator(**{"batch.size": "1000", "linger.ms": "1000"})
    results = [_append(acc, 0) for _ in range(20)]
    assert results[0] == AppendResult.NEW_BATCH
    assert results.count(AppendResult.NEW_BATCH) == 3  # about 8 records of ~108 bytes each
    now = time.monotonic()
    nodes, _, _ = acc.ready(_metadata({0: 1, 1: 2}), now)
    assert nodes == {1}  # full batches are ready before linger.ms
    drained = acc.drain(_metadata({0: 1, 1: 2}), 1, 1 << 20, now)
    assert len(drained) == 1 and drained[0].tp == TP("t", 0)  # one batch per partition


def test_partial_batch_waits_for_linger() -> None:
    acc = _accumulator(**{"linger.ms": "50"})
    _append(acc, 1)
    metadata = _metadata({0: 1, 1: 2})
    now = time.monotonic()
    nodes, delay, _ = acc.ready(metadata, now)
    assert nodes == set() and 0 < delay <= 0.05
    nodes, _, _ = acc.ready(metadata, now + 0.06)
    assert nodes == {2}


def test_unknown_leader_is_reported() -> None:
    acc = _accumulator(**{"linger.ms": "0"})
    _append(acc, 0)
    nodes, _, unknown = acc.ready(_metadata({0: -1, 1: 2}), time.monotonic())
    assert nodes == set() and unknown


def test_buffer_memory_bounds_open_batches() -> None:
    acc = _accumulator(**{"batch.size": "1024", "buffer.memory": "2100", "linger.ms": "0"})
    assert _append(acc, 0) == AppendResult.NEW_BATCH
    assert _append(acc, 1) == AppendResult.NEW_BATCH
    for _ in range(5):
        _append(acc, 0)
    big = b"y" * 1000
    assert _append(acc, 0, big) == AppendResult.NO_MEMORY
    batch = acc.drain(_metadata({0: 1, 1: 1}), 1, 1 << 20, time.monotonic())[0]
    acc.finished(batch)
    assert _append(acc, 0, big) == AppendResult.NEW_BATCH


def test_sticky_records_move_on_when_a_batch_fills() -> None:
    acc = _accumulator(**{"batch.size": "500", "linger.ms": "1000"})
    for _ in range(40):
        _append(acc, None)
    drained = acc.drain(_metadata({0: 1, 1: 1}), 1, 1 << 20, time.monotonic())
    assert {b.tp.partition for b in drained} == {0, 1}


def test_retried_batch_goes_back_in_sequence_order_and_mutes_its_partition() -> None:
    acc = _accumulator(**{"linger.ms": "0", "batch.size": "300"})
    metadata = _metadata({0: 1, 1: 2})
    for _ in range(6):
        _append(acc, 0)
    now = time.monotonic()
    first = acc.drain(metadata, 1, 1 << 20, now)[0]
    second = acc.drain(metadata, 1, 1 << 20, now)[0]
    first.base_sequence, second.base_sequence = 0, first.count
    acc.reenqueue(second, 0.0)
    acc.reenqueue(first, 0.0)
    assert acc.is_retrying(TP("t", 0))
    retry = acc.drain(metadata, 1, 1 << 20, now + 1)
    assert retry == [first]
    assert acc.drain(metadata, 1, 1 << 20, now + 1) == []  # muted while the retry is in flight
    acc.finished(first)
    assert acc.drain(metadata, 1, 1 << 20, now + 1) == [second]
    acc.finished(second)
    assert not acc.is_retrying(TP("t", 0))


def test_a_batch_behind_an_unanswered_one_is_told_to_wait() -> None:
    """An out-of-order answer while an earlier batch is still in flight is retried.

    The nemesis found it: batch 360-364 was in flight to a paused leader when
    365-519 got OUT_OF_ORDER_SEQUENCE_NUMBER; treated as final, it reset the
    producer id and the retried 360-364 landed after newer records.
    """
    acc = _accumulator(
        **{"linger.ms": "0", "batch.size": "300", "max.in.flight.requests.per.connection": "5"}
    )
    metadata = _metadata({0: 1, 1: 2})
    for _ in range(6):
        _append(acc, 0)
    now = time.monotonic()
    first = acc.drain(metadata, 1, 1 << 20, now)[0]
    second = acc.drain(metadata, 1, 1 << 20, now)[0]
    first.base_sequence, second.base_sequence = 0, first.count
    assert acc.has_earlier_unresolved(second)  # first is still in flight
    assert not acc.has_earlier_unresolved(first)
    acc.reenqueue(first, 0.0)  # first failed and waits for its retry: still earlier
    assert acc.has_earlier_unresolved(second)
    acc.finished(first)
    assert not acc.has_earlier_unresolved(second)


def test_expired_batches_are_removed() -> None:
    acc = _accumulator()
    _append(acc, 0)
    assert acc.expire(time.monotonic(), 1.0) == []
    expired = acc.expire(time.monotonic() + 2, 1.0)
    assert len(expired) == 1 and not acc.has_queued()
