"""Idempotent-producer sequence checks."""

from __future__ import annotations

from log_engine.broker.producer_state import ProducerStateTable, SequenceCheck
from log_engine.records import Record, build_batch, read_header


def header(producer_id: int, epoch: int, sequence: int, count: int = 2):
    records = [Record(b"k", b"v")] * count
    return read_header(
        build_batch(records, producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence)
    )


def test_in_order_duplicate_and_gap() -> None:
    table = ProducerStateTable()
    first = header(7, 0, 0)
    assert table.check(first)[0] is SequenceCheck.APPEND
    table.record(first, first_offset=100, timestamp=1)
    verdict, original = table.check(first)
    assert verdict is SequenceCheck.DUPLICATE and original is not None
    assert original.first_offset == 100
    assert table.check(header(7, 0, 2))[0] is SequenceCheck.APPEND
    assert table.check(header(7, 0, 5))[0] is SequenceCheck.OUT_OF_ORDER


def test_new_producer_must_start_at_zero_and_old_epoch_is_fenced() -> None:
    table = ProducerStateTable()
    assert table.check(header(9, 0, 3))[0] is SequenceCheck.OUT_OF_ORDER
    table.record(header(9, 1, 0), 0, 1)
    assert table.check(header(9, 0, 2))[0] is SequenceCheck.FENCED_EPOCH
    assert table.check(header(9, 2, 0))[0] is SequenceCheck.APPEND


def test_non_idempotent_batches_are_not_tracked() -> None:
    table = ProducerStateTable()
    plain = header(-1, -1, -1)
    assert table.check(plain)[0] is SequenceCheck.APPEND
    table.record(plain, 0, 1)
    assert len(table) == 0
