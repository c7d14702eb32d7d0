"""Splitting a batch the broker refused as too large: the pieces, their order and results."""

from __future__ import annotations

import concurrent.futures
import random
import time

import pytest

from log_engine.client.accumulator import RecordAccumulator
from log_engine.client.cluster import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from log_engine.client.config import ProducerConfig
from log_engine.client.errors import PartialDeliveryError, kafka_error
from log_engine.client.partitioner import StickyPartitioner
from log_engine.client.producer_batch import ProducerBatch
from log_engine.client.types import TopicPartition
from log_engine.errors import ErrorCode
from log_engine.invariants import InvariantViolation
from log_engine.records import BATCH_HEADER_SIZE, Compression, decode_batch

TP = TopicPartition("t", 0)
RECORDS = [
    (b"k%d" % n if n % 4 else None, bytes([n]) * (50 + n), [("h", b"%d" % n)] * (n % 3), 1000 + n)
    for n in range(40)
]


def _sealed(codec: Compression = Compression.NONE, sequence: int = -1) -> ProducerBatch:
    batch = ProducerBatch(TP, 1000, 1 << 20, 1 << 20)
    for key, value, headers, stamp in RECORDS:
        batch.append(key, value, headers or None, stamp, None)
    batch.seal(codec, 7 if sequence >= 0 else -1, 1 if sequence >= 0 else -1, sequence)
    return batch


def _decoded(pieces: list[ProducerBatch]) -> list[tuple[object, ...]]:
    out = []
    for piece in pieces:
        assert piece.wire is not None
        header, records = decode_batch(piece.wire)
        assert [r.offset for r in records] == list(range(header.records_count))
        out += [(r.key, r.value, list(r.headers), r.timestamp) for r in records]
    return out


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.LZ4, Compression.GZIP])
def test_pieces_hold_the_records_in_order_within_the_limit_with_the_same_codec(
    codec: Compression,
) -> None:
    pieces = _sealed(codec).split(800)
    assert len(pieces) > 3
    for piece in pieces:
        assert piece.wire is not None
        header, _ = decode_batch(piece.wire)
        assert header.compression == codec
        assert header.max_timestamp == max(piece.timestamps)
        assert BATCH_HEADER_SIZE + len(piece.records_bytes()) <= 800
    assert _decoded(pieces) == [(k, v, h, ts) for k, v, h, ts in RECORDS]


def test_pieces_take_the_batchs_sequence_range_in_turn() -> None:
    pieces = _sealed(sequence=100).split(1000)
    assert [p.base_sequence for p in pieces] == [
        100 + sum(p.count for p in pieces[:n]) for n in range(len(pieces))
    ]
    assert {(p.producer_id, p.producer_epoch) for p in pieces} == {(7, 1)}


@pytest.mark.parametrize("limit", [None, 1 << 20])  # none, or one that would not cut it
def test_without_a_usable_limit_the_records_are_halved(limit: int | None) -> None:
    batch = _sealed()
    half = len(batch.records_bytes()) // 2
    pieces = batch.split(limit)
    assert len(pieces) >= 2  # progress, however the batch was refused
    assert all(len(p.records_bytes()) <= half for p in pieces)
    assert _decoded(pieces) == [(k, v, h, ts) for k, v, h, ts in RECORDS]


def test_a_single_record_is_not_split() -> None:
    batch = ProducerBatch(TP, 0, 1000, 1000)
    batch.append(None, b"v", None, 0, None)
    batch.seal(Compression.NONE)
    with pytest.raises(InvariantViolation):
        batch.split(100)


def test_each_record_gets_the_offset_its_piece_landed_at() -> None:
    batch = ProducerBatch(TP, 1000, 1 << 20, 1 << 20)
    futures = [batch.append(None, v, None, ts, None) for _, v, _, ts in RECORDS[:10]]
    run_end, run = batch.append_run(None, [v for _, v, _, _ in RECORDS[10:]], None, None, 2000,
                                    0, 30)
    assert run_end == 30 and run is not None
    batch.seal(Compression.NONE)
    pieces = batch.split(600)
    second = pieces[1].split(None)  # a piece split again reports to the first batch
    landed = [(piece, 100 + 1000 * n) for n, piece in enumerate([pieces[0], *second, *pieces[2:]])]
    expected: list[int] = []
    for piece, base in landed:
        assert not batch.done
        piece.complete(base, -1)
        expected += range(base, base + piece.count)
    assert batch.done and not any(p.split_state for p in pieces)
    assert [f.result(timeout=0).offset for f in futures] == expected[:10]
    assert [m.offset for m in run.result(timeout=0)] == expected[10:]
    assert [m.timestamp for m in run.result(timeout=0)] == [2000] * 30


def test_a_failed_piece_fails_only_the_futures_of_its_records() -> None:
    batch = ProducerBatch(TP, 0, 1 << 20, 1 << 20)
    futures: list[concurrent.futures.Future[object]] = []
    for n in range(12):  # futures of our own, as the asyncio producer passes
        futures.append(concurrent.futures.Future())
        batch.append(None, b"v" * 100, None, n, futures[-1])
    batch.seal(Compression.NONE)
    pieces = batch.split(BATCH_HEADER_SIZE + 4 * 110)
    assert [p.count for p in pieces] == [4, 4, 4]
    error = kafka_error(ErrorCode.MESSAGE_TOO_LARGE, "too large")
    pieces[1].fail(error)
    pieces[0].complete(10, -1)
    assert not batch.done  # waits for its last piece
    pieces[2].complete(50, 7)
    assert [f.exception(timeout=0) is error for f in futures] == [False] * 4 + [True] * 4 + [
        False
    ] * 4
    results = [f.result(timeout=0) for n, f in enumerate(futures) if not 4 <= n < 8]
    assert [r.offset for r in results] == [10, 11, 12, 13, 50, 51, 52, 53]
    assert [r.timestamp for r in results] == [0, 1, 2, 3, 7, 7, 7, 7]  # log append time


def test_a_run_spanning_a_failed_piece_names_the_records_not_delivered() -> None:
    batch = ProducerBatch(TP, 0, 1 << 20, 1 << 20)
    _, first = batch.append_run(None, [b"a" * 100] * 6, None, None, 0, 0, 6)
    single = batch.append(None, b"b" * 100, None, 0, None)
    batch.seal(Compression.LZ4)
    pieces = batch.split(BATCH_HEADER_SIZE + 3 * 110)
    assert first is not None and [p.count for p in pieces] == [3, 3, 1]
    error = kafka_error(ErrorCode.MESSAGE_TOO_LARGE, "too large")
    pieces[0].complete(0, -1)
    pieces[1].fail(error)
    pieces[2].complete(3, -1)
    partial = first.exception(timeout=0)  # records 0-2 landed, 3-5 did not
    assert isinstance(partial, PartialDeliveryError)
    assert partial.failed == {3: error, 4: error, 5: error} and partial.count == 6
    assert single.result(timeout=0).offset == 3


def test_a_run_inside_one_failed_piece_fails_with_the_pieces_error() -> None:
    batch = ProducerBatch(TP, 0, 1 << 20, 1 << 20)
    _, first = batch.append_run(None, [b"a" * 100] * 3, None, None, 0, 0, 3)
    _, second = batch.append_run(None, [b"a" * 100] * 3, None, None, 0, 0, 3)
    batch.seal(Compression.NONE)
    pieces = batch.split(BATCH_HEADER_SIZE + 3 * 110)
    assert first is not None and second is not None and [p.count for p in pieces] == [3, 3]
    error = kafka_error(ErrorCode.MESSAGE_TOO_LARGE, "too large")
    pieces[0].fail(error)
    pieces[1].complete(7, -1)
    assert first.exception(timeout=0) is error
    assert [m.offset for m in second.result(timeout=0)] == [7, 8, 9]


# -- the accumulator ----------------------------------------------------------------------


def _metadata() -> ClusterMetadata:
    parts = {0: PartitionInfo("t", 0, 1, 0, (1,), (1,))}
    return ClusterMetadata({1: BrokerInfo(1, "h", 9001)}, {"t": TopicInfo("t", 0, False, parts)})


def _accumulator() -> RecordAccumulator:
    config = ProducerConfig.from_mapping(
        {"bootstrap.servers": "h:1", "batch.size": "2000", "linger.ms": "0",
         "buffer.memory": "10000"}
    )
    return RecordAccumulator(config, StickyPartitioner(random.Random(0)))


def _fill(acc: RecordAccumulator, records: int) -> None:
    for _ in range(records):
        acc.try_append("t", 0, None, b"x" * 90, None, 0, None, 130, 1, [0])


@pytest.mark.parametrize("sequenced", [True, False])
def test_pieces_go_back_at_the_head_in_order_and_the_batch_holds_its_memory(
    sequenced: bool,
) -> None:
    acc = _accumulator()
    _fill(acc, 40)  # three batches of 2000 bytes at most
    now = time.monotonic()
    batch = acc.drain(_metadata(), 1, 1 << 20, now)[0]
    batch.seal(Compression.NONE, 3 if sequenced else -1, 0 if sequenced else -1,
               0 if sequenced else -1)
    later = acc.snapshot_incomplete()
    pieces = batch.split(700)
    acc.split_and_reenqueue(batch, pieces)
    assert acc.is_retrying(TP) is sequenced
    drained = []
    while (taken := acc.drain(_metadata(), 1, 1 << 20, now + 1)):
        drained += taken
        for piece in taken:
            piece.complete(0, -1)
            acc.finished(piece)
            if piece.parent is not None and piece.parent.done:
                acc.finished(piece.parent)
    assert drained[: len(pieces)] == pieces  # ahead of the batches queued after it
    assert len(drained) == len(pieces) + len(later) - 1
    assert batch.done and not acc.incomplete
    assert acc._free_bytes == 10000  # every reservation was given back once
