"""Source offsets become committable only after their record and all earlier ones were acked."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import pytest

from connect_worker.runtime.source_offsets import OffsetCommitter, SubmittedRecords
from connect_worker.storage.offsets import MemoryOffsetStore, partition_key
from connectors.api import SourceRecord, SourceTask

Future = concurrent.futures.Future[Any]


def record(partition: str | None, n: int) -> SourceRecord:
    return SourceRecord(
        topic="t",
        value=n,
        source_partition=None if partition is None else {"p": partition},
        source_offset={"n": n},
    )


def acked() -> Future:
    future: Future = concurrent.futures.Future()
    future.set_result(None)
    return future


def committable(submitted: SubmittedRecords) -> dict[str, Any]:
    return {k: off for k, (_, off) in submitted.take_committable().items()}


KEY_A, KEY_B = partition_key({"p": "a"}), partition_key({"p": "b"})


def test_an_ack_out_of_order_waits_for_the_earlier_records() -> None:
    submitted = SubmittedRecords()
    futures = [concurrent.futures.Future() for _ in range(3)]
    for n, future in enumerate(futures):
        submitted.submit(record("a", n), future)
    futures[2].set_result(None)
    futures[1].set_result(None)
    submitted.collect()
    assert committable(submitted) == {}
    assert submitted.in_flight == 3
    futures[0].set_result(None)
    submitted.collect()
    assert committable(submitted) == {KEY_A: {"n": 2}}
    assert submitted.in_flight == 0


def test_partitions_are_independent() -> None:
    submitted = SubmittedRecords()
    slow: Future = concurrent.futures.Future()
    submitted.submit(record("a", 0), slow)
    submitted.submit(record("b", 0), acked())
    submitted.submit(record("b", 1), acked())
    submitted.collect()
    assert committable(submitted) == {KEY_B: {"n": 1}}
    assert submitted.oldest_pending() is slow


def test_dropped_records_count_as_acked_in_order() -> None:
    submitted = SubmittedRecords()
    first: Future = concurrent.futures.Future()
    submitted.submit(record("a", 0), first)
    submitted.submit(record("a", 1), None)  # filtered by a transform
    submitted.collect()
    assert committable(submitted) == {}
    first.set_result(None)
    submitted.collect()
    assert committable(submitted) == {KEY_A: {"n": 1}}


def test_records_without_partition_are_tracked_but_not_committed() -> None:
    submitted = SubmittedRecords()
    submitted.submit(record(None, 0), acked())
    seen: list[SourceRecord] = []
    submitted.collect(on_ack=seen.append)
    assert [r.value for r in seen] == [0]
    assert committable(submitted) == {}
    assert submitted.acked_since_take == 0  # reset by take


def test_a_failed_delivery_keeps_what_was_acked_before_it() -> None:
    submitted = SubmittedRecords()
    failed: Future = concurrent.futures.Future()
    failed.set_exception(RuntimeError("broker said no"))
    submitted.submit(record("a", 0), acked())
    submitted.submit(record("a", 1), failed)
    submitted.submit(record("a", 2), acked())
    with pytest.raises(RuntimeError):
        submitted.collect()
    assert committable(submitted) == {KEY_A: {"n": 0}}
    skipped: list[int] = []
    submitted.collect(on_failure=lambda r, e: skipped.append(r.value))
    assert skipped == [1]
    assert committable(submitted) == {KEY_A: {"n": 2}}


class _Task(SourceTask):
    def __init__(self) -> None:
        super().__init__()
        self.commits = 0

    def start(self, props: Any) -> None:
        pass

    def poll(self) -> list[SourceRecord]:
        return []

    def commit(self) -> None:
        self.commits += 1

    def stop(self) -> None:
        pass


class _BrokenStore(MemoryOffsetStore):
    def __init__(self) -> None:
        super().__init__()
        self.fail = True

    def flush(self) -> None:
        if self.fail:
            raise OSError("disk full")


def test_committer_stores_then_calls_commit() -> None:
    store, task, submitted = MemoryOffsetStore(), _Task(), SubmittedRecords()
    committer = OffsetCommitter(
        "c", task, store, submitted, interval_ms=60000, on_ack=None, on_failure=None
    )
    assert committer.commit()
    assert task.commits == 0  # nothing acked, nothing to tell the task
    submitted.submit(record("a", 7), acked())
    assert committer.commit()
    assert store.get("c", {"p": "a"}) == {"n": 7}
    assert task.commits == 1


def test_committer_keeps_offsets_when_storing_fails() -> None:
    store, task, submitted = _BrokenStore(), _Task(), SubmittedRecords()
    committer = OffsetCommitter(
        "c", task, store, submitted, interval_ms=60000, on_ack=None, on_failure=None
    )
    submitted.submit(record("a", 1), acked())
    assert not committer.commit()
    assert task.commits == 0
    store.fail = False
    assert committer.commit()
    assert store.get("c", {"p": "a"}) == {"n": 1}


def test_committer_commits_the_first_batch_at_once_then_waits_for_its_interval() -> None:
    store, task, submitted = MemoryOffsetStore(), _Task(), SubmittedRecords()
    committer = OffsetCommitter(
        "c", task, store, submitted, interval_ms=60000, on_ack=None, on_failure=None
    )
    committer.maybe_commit(now=0.0)  # nothing sent yet: nothing stored
    assert store.get("c", {"p": "a"}) is None
    first: concurrent.futures.Future[None] = concurrent.futures.Future()
    submitted.submit(record("a", 1), first)
    threading.Timer(0.05, first.set_result, (None,)).start()
    committer.maybe_commit(now=0.0)  # waits for the first acknowledgement
    assert store.get("c", {"p": "a"}) == {"n": 1}
    submitted.submit(record("a", 2), acked())
    committer.maybe_commit(now=0.0)
    assert store.get("c", {"p": "a"}) == {"n": 1}  # later batches: on the interval
    committer.maybe_commit(now=float("inf"))
    assert store.get("c", {"p": "a"}) == {"n": 2}


# -- records sent together (SyncProducer.send_many segments) ------------------------------


def test_a_batch_becomes_committable_at_its_newest_offset_once_acked() -> None:
    submitted = SubmittedRecords()
    batch = [record("a", n) for n in range(5)] + [record("b", n) for n in range(3)]
    first, second = concurrent.futures.Future(), concurrent.futures.Future()
    submitted.submit_many(batch, 0, 6, first)  # a0..a4 and b0 in one delivery
    submitted.submit_many(batch, 6, 8, second)
    assert submitted.in_flight == 8
    second.set_result(None)
    submitted.collect()
    assert committable(submitted) == {}  # b1, b2 wait for b0 (in the first delivery)
    first.set_result(None)
    submitted.collect()
    assert committable(submitted) == {KEY_A: {"n": 4}, KEY_B: {"n": 2}}
    assert submitted.in_flight == 0


def test_acks_of_a_batch_reach_commit_record_per_record_in_order() -> None:
    submitted = SubmittedRecords()
    batch = [record("a", n) for n in range(4)]
    submitted.submit_many(batch, 0, 2, acked())
    submitted.submit_many(batch, 2, 4, None)  # dropped ones: nothing to wait for
    seen: list[int] = []
    submitted.collect(on_ack=lambda r: seen.append(r.value))
    assert seen == [0, 1, 2, 3]


def test_a_failed_batch_fails_each_of_its_records_and_only_once() -> None:
    submitted = SubmittedRecords()
    batch = [record("a", n) for n in range(6)]
    failed: Future = concurrent.futures.Future()
    failed.set_exception(RuntimeError("broker said no"))
    submitted.submit_many(batch, 0, 2, acked())
    submitted.submit_many(batch, 2, 5, failed)
    submitted.submit_many(batch, 5, 6, acked())
    with pytest.raises(RuntimeError):
        submitted.collect()
    assert committable(submitted) == {KEY_A: {"n": 1}}  # not past the failed records
    calls: list[int] = []

    def fail_on_three(rec: SourceRecord, error: BaseException) -> None:
        calls.append(rec.value)
        if rec.value == 3:
            raise ValueError("tolerance none")

    with pytest.raises(ValueError):
        submitted.collect(on_failure=fail_on_three)
    assert committable(submitted) == {KEY_A: {"n": 2}}  # record 2 was skipped before 3 failed
    submitted.collect(on_failure=lambda r, e: calls.append(r.value))
    assert calls == [2, 3, 3, 4]  # 3 again (its handler raised), never 2 twice
    assert committable(submitted) == {KEY_A: {"n": 5}}
    assert submitted.in_flight == 0
