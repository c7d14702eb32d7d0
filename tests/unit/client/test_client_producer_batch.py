"""Producer batches: bytes the records codec reads back, and the shared-condition futures."""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

from log_engine.client.delivery import DeliveryFuture
from log_engine.client.producer_batch import ProducerBatch, encoded_size
from log_engine.client.types import RecordMetadata, TopicPartition
from log_engine.records import Compression, decode_batch, validate_batch

TP = TopicPartition("t", 3)


def _batch(records: list[tuple[bytes | None, bytes | None, list, int]]) -> ProducerBatch:
    batch = ProducerBatch(TP, records[0][3], 1 << 20, 1 << 20)
    for key, value, headers, ts in records:
        assert batch.has_room(encoded_size(key, value, headers))
        batch.append(key, value, headers, ts, None)
    return batch


@pytest.mark.parametrize("codec", list(Compression))
def test_sealed_batch_decodes_to_the_appended_records(codec: Compression) -> None:
    records = [
        (b"k1", b"v1", [], 1000),
        (None, b"v" * 300, [("h", b"x"), ("h", None)], 1005),
        (b"k3", None, [("\u00e9", b"")], 999),
    ]
    batch = _batch(records)
    batch.seal(codec)
    assert batch.wire is not None
    header, decoded = decode_batch(batch.wire)
    assert header.compression == codec
    assert header.records_count == 3
    assert header.base_timestamp == 1000 and header.max_timestamp == 1005
    assert header.producer_id == -1 and header.base_sequence == -1
    assert [(r.key, r.value, list(r.headers), r.timestamp) for r in decoded] == records
    assert [r.offset for r in decoded] == [0, 1, 2]


def test_resealing_restamps_the_producer_fields_and_crc() -> None:
    batch = _batch([(None, b"a", [], 5), (None, b"b", [], 5)])
    batch.seal(Compression.LZ4, 77, 2, 10)
    first = batch.wire
    batch.seal(Compression.LZ4, 78, 0, 0)
    assert batch.wire is not None and batch.wire != first
    header = validate_batch(batch.wire)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (78, 0, 0)
    assert header.last_offset_delta == 1


def test_batch_refuses_records_beyond_its_limit_but_always_takes_one() -> None:
    batch = ProducerBatch(TP, 0, 200, 200)
    assert batch.has_room(10_000)
    batch.append(None, b"x" * 150, None, 0, None)
    assert not batch.has_room(encoded_size(None, b"x" * 150, None))


def test_complete_resolves_offsets_and_timestamps() -> None:
    batch = _batch([(None, b"a", [], 10), (None, b"b", [], 12)])
    futures = list(batch.futures)
    batch.complete(100, -1)
    assert [f.result(0) for f in futures] == [
        RecordMetadata("t", 3, 100, 10),
        RecordMetadata("t", 3, 101, 12),
    ]
    batch = _batch([(None, b"a", [], 10)])
    batch.complete(-1, 555)  # acks=0, log-append time
    assert batch.futures[0].result(0) == RecordMetadata("t", 3, -1, 555)


def test_delivery_futures_work_with_the_concurrent_futures_api() -> None:
    batch = _batch([(None, b"a", [], 1), (None, b"b", [], 1), (None, b"c", [], 1)])
    futures: list[DeliveryFuture] = list(batch.futures)
    assert all(isinstance(f, concurrent.futures.Future) for f in futures)
    with pytest.raises(concurrent.futures.TimeoutError):
        futures[0].result(0.01)
    seen: list[int] = []
    futures[1].add_done_callback(lambda f: seen.append(f.result().offset))
    assert not futures[2].cancel()

    results: list[int] = []
    waiters = [
        threading.Thread(target=lambda f=f: results.append(f.result(5).offset)) for f in futures
    ]
    for waiter in waiters:
        waiter.start()
    timer = threading.Timer(0.05, batch.complete, (7, -1))
    timer.start()
    done, _ = concurrent.futures.wait(futures, timeout=5)
    for waiter in waiters:
        waiter.join(5)
    assert len(done) == 3
    assert sorted(results) == [7, 8, 9]
    assert seen == [8]
    assert [f.result() for f in concurrent.futures.as_completed(futures)]


def test_failed_batch_fails_every_future() -> None:
    batch = _batch([(None, b"a", [], 1), (None, b"b", [], 1)])
    error = RuntimeError("boom")
    batch.fail(error)
    for future in batch.futures:
        assert future.exception(0) is error


def test_failing_wakes_waiters_and_runs_callbacks() -> None:
    batch = _batch([(None, b"a", [], 1), (None, b"b", [], 1)])
    futures = list(batch.futures)
    errors: list[BaseException | None] = []
    futures[0].add_done_callback(lambda f: errors.append(f.exception()))
    timer = threading.Timer(0.05, batch.fail, (ValueError("refused"),))
    timer.start()
    done, not_done = concurrent.futures.wait(
        futures, timeout=5, return_when=concurrent.futures.FIRST_EXCEPTION
    )
    assert done == set(futures) and not not_done  # all fail together
    with pytest.raises(ValueError, match="refused"):
        futures[1].result(5)
    assert isinstance(errors[0], ValueError)
    late: list[object] = []
    futures[1].add_done_callback(late.append)  # already done: runs at once
    assert late == [futures[1]]
    assert "raised ValueError" in repr(futures[0])


def test_metadata_is_built_on_demand_and_repeatable() -> None:
    batch = _batch([(None, b"a", [], 3)])
    (future,) = batch.futures
    assert "pending" in repr(future)
    batch.complete(41, -1)
    assert future.result() == future.result() == RecordMetadata("t", 3, 41, 3)
    assert future.exception() is None and future.done() and not future.cancelled()
