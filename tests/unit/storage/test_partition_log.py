"""Appending and reading a partition log: offsets, rolls, index lookups, limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from log_engine.errors import (
    CrcMismatchError,
    InvalidMagicError,
    InvalidRecordError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    TruncatedBatchError,
    UnexpectedAppendOffsetError,
)
from log_engine.records import Compression, Record, TimestampType, build_batch, read_header

from .helpers import BASE_TS, Clock, all_records, batch, batch_offsets, config, open_log


def test_empty_log_starts_at_zero(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert (log.log_start_offset, log.log_end_offset, log.size_bytes) == (0, 0, 0)
    assert log.read(0, 1000).slices == []
    assert (tmp_path / "topic-0" / "00000000000000000000.log").exists()
    log.close()


def test_append_assigns_continuous_offsets_and_reads_back(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    infos = [log.append(batch(3)) for _ in range(4)]
    assert [(i.first_offset, i.last_offset) for i in infos] == [(0, 2), (3, 5), (6, 8), (9, 11)]
    assert infos[0].batch_count == 1 and infos[0].log_append_time_ms == -1
    assert log.log_end_offset == 12
    assert [r.offset for r in all_records(log)] == list(range(12))
    log.close()


def test_append_several_batches_in_one_request(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    info = log.append(batch(2) + batch(5) + batch(1))
    assert (info.first_offset, info.last_offset, info.batch_count) == (0, 7, 3)
    data = log.read(0, 1 << 20).read_bytes()
    assert batch_offsets(data) == [0, 2, 7]
    assert info.size_bytes == len(data)
    log.close()


def test_leader_epoch_is_stamped_and_cached(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append(batch(2), leader_epoch=3)
    log.append(batch(2), leader_epoch=5)
    data = log.read(2, 1 << 20).read_bytes()
    assert read_header(data).partition_leader_epoch == 5
    assert log.leader_epochs.entries == [(3, 0), (5, 2)]
    assert log.leader_epochs.end_offset_for(3) == (3, 2)
    assert log.leader_epochs.end_offset_for(5) == (5, 4)
    assert log.leader_epochs.end_offset_for(4) == (3, 2)
    log.close()


def test_log_append_time_is_stamped(tmp_path: Path) -> None:
    clock = Clock(BASE_TS + 5000)
    log = open_log(tmp_path, config(**{"message.timestamp.type": "LogAppendTime"}), clock)
    info = log.append(batch(2, timestamp=BASE_TS))
    assert info.log_append_time_ms == BASE_TS + 5000 == info.max_timestamp
    header = read_header(log.read(0, 1000).read_bytes())
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in all_records(log)] == [BASE_TS + 5000] * 2
    log.close()


@pytest.mark.parametrize(
    ("corrupt", "error"),
    [
        (lambda b: b[:17] + bytes([b[17] ^ 1]) + b[18:], CrcMismatchError),
        (lambda b: b[:16] + b"\x01" + b[17:], InvalidMagicError),
        (lambda b: b[:-3], TruncatedBatchError),
    ],
)
def test_a_bad_batch_appends_nothing(tmp_path: Path, corrupt, error) -> None:  # type: ignore[no-untyped-def]
    log = open_log(tmp_path)
    log.append(batch(1))
    size = log.size_bytes
    with pytest.raises(error):
        log.append(batch(2) + corrupt(bytearray(batch(2))))
    assert (log.log_end_offset, log.size_bytes) == (1, size)
    log.append(batch(1))
    assert [r.offset for r in all_records(log)] == [0, 1]
    log.close()


def test_too_large_batch_is_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path, config(**{"max.message.bytes": 500}))
    with pytest.raises(MessageTooLargeError):
        log.append(batch(1, value_size=600))
    assert log.log_end_offset == 0 and log.size_bytes == 0
    log.close()


def test_sparse_offsets_from_a_producer_are_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    gappy = build_batch(
        [Record(b"a", b"1", offset=0), Record(b"b", b"2", offset=5)], keep_offsets=True
    )
    with pytest.raises(InvalidRecordError):
        log.append(gappy)
    log.close()


def test_replica_append_keeps_offsets_and_refuses_going_back(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    replica = bytearray(
        build_batch([Record(b"a", b"1")] * 3, base_offset=10, partition_leader_epoch=2)
    )
    info = log.append(replica, assign_offsets=False)
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (10, 12, 13)
    assert log.leader_epochs.entries == [(2, 10)]
    with pytest.raises(UnexpectedAppendOffsetError):
        log.append(build_batch([Record(b"a", b"1")], base_offset=12), assign_offsets=False)
    log.close()


def test_empty_append_is_a_no_op(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.append(b"").batch_count == 0
    assert log.log_end_offset == 0
    log.close()


def test_rolls_at_segment_bytes_and_reads_across_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, config(**{"segment.bytes": 1000}))
    for _ in range(20):
        log.append(batch(2, value_size=100))  # ~300 bytes per batch
    bases = [s.base_offset for s in log.segments]
    assert len(bases) >= 6 and bases == sorted(bases)
    assert all(s.size <= 1000 for s in log.segments)
    result = log.read(0, 1 << 20)
    assert len(result.slices) == len(bases)
    assert [r.offset for r in all_records(log)] == list(range(40))
    names = sorted(os.listdir(tmp_path / "topic-0"))
    assert f"{bases[1]:020d}.log" in names and f"{bases[1]:020d}.timeindex" in names
    log.close()


def test_rolls_at_segment_ms(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, config(**{"segment.ms": 1000}), clock)
    log.append(batch(1, timestamp=clock.now_ms))
    clock.advance(500)
    log.append(batch(1, timestamp=clock.now_ms))
    assert len(log.segments) == 1
    clock.advance(600)
    log.append(batch(1, timestamp=clock.now_ms))
    assert [s.base_offset for s in log.segments] == [0, 2]
    log.close()


def test_rolls_when_the_index_is_full(tmp_path: Path) -> None:
    cfg = config(**{"segment.index.bytes": 8 * 3, "index.interval.bytes": 0})
    log = open_log(tmp_path, cfg)
    for _ in range(12):
        log.append(batch(1))
    assert len(log.segments) > 2
    assert all(s.offset_index.entries <= 3 for s in log.segments)
    assert [r.offset for r in all_records(log)] == list(range(12))
    log.close()


def test_index_lookup_finds_every_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path, config(**{"index.interval.bytes": 200, "segment.bytes": 20_000}))
    for i in range(60):
        log.append(batch(1 + i % 4, value_size=40))
    assert any(s.offset_index.entries > 5 for s in log.segments)
    for offset in range(log.log_end_offset):
        result = log.read(offset, 1)
        assert result.first_batch_offset <= offset < result.next_offset
    log.close()


def test_read_limits(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for _ in range(10):
        log.append(batch(2, value_size=100))
    one = len(log.read(0, 1).read_bytes())
    assert log.read(0, 1).size_bytes == one  # KIP-74: one whole batch even past max_bytes
    assert log.read(0, 1, min_one_batch=False).slices == []
    assert log.read(0, one * 3 + 5).size_bytes == one * 3
    assert log.read(3, one * 2).first_batch_offset == 2
    hw = log.read(0, 1 << 20, max_offset=6)
    assert batch_offsets(hw.read_bytes()) == [0, 2, 4] and hw.next_offset == 6
    assert log.read(0, 1 << 20, max_offset=5).next_offset == 4  # never part of a batch
    assert log.read(6, 1 << 20, max_offset=6).slices == []
    assert log.read(20, 100).slices == []
    with pytest.raises(OffsetOutOfRangeError):
        log.read(21, 100)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 100)
    log.close()


def test_offset_for_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path, config(**{"segment.bytes": 2000, "index.interval.bytes": 100}))
    for i in range(30):
        records = [Record(b"k", b"v" * 60, timestamp=BASE_TS + 10 * i + j) for j in range(3)]
        log.append(
            build_batch(records, compression=Compression.GZIP if i % 2 else Compression.NONE)
        )
    assert len(log.segments) >= 3
    assert log.offset_for_timestamp(0) == (0, BASE_TS)
    assert log.offset_for_timestamp(BASE_TS + 101) == (31, BASE_TS + 101)
    assert log.offset_for_timestamp(BASE_TS + 103) == (33, BASE_TS + 110)
    assert log.offset_for_timestamp(BASE_TS + 292) == (89, BASE_TS + 292)
    assert log.offset_for_timestamp(BASE_TS + 293) is None
    log.delete_records_before(32)
    assert log.offset_for_timestamp(0) == (32, BASE_TS + 102)
    log.close()


def test_offset_for_timestamp_with_out_of_order_timestamps(tmp_path: Path) -> None:
    log = open_log(tmp_path, config(**{"index.interval.bytes": 0}))
    for ts in [50, 10, 70, 30, 90, 60]:
        log.append(batch(1, timestamp=BASE_TS + ts))
    assert log.offset_for_timestamp(BASE_TS + 55) == (2, BASE_TS + 70)
    assert log.offset_for_timestamp(BASE_TS + 80) == (4, BASE_TS + 90)
    assert log.offset_for_timestamp(BASE_TS + 5) == (0, BASE_TS + 50)
    log.close()


def test_reopen_after_clean_close_keeps_everything(tmp_path: Path) -> None:
    cfg = config(**{"segment.bytes": 1500, "index.interval.bytes": 100})
    log = open_log(tmp_path, cfg)
    for _ in range(30):
        log.append(batch(2, value_size=60), leader_epoch=1)
    ends = [(s.base_offset, s.next_offset, s.size) for s in log.segments]
    log.close()
    index = tmp_path / "topic-0" / "00000000000000000000.index"
    assert index.stat().st_size % 8 == 0 and index.stat().st_size < cfg.segment_index_bytes
    log = open_log(tmp_path, cfg, clean_shutdown=True)
    assert [(s.base_offset, s.next_offset, s.size) for s in log.segments] == ends
    assert log.log_end_offset == 60 and log.recovery_point == 60
    assert log.leader_epochs.entries == [(1, 0)]
    log.append(batch(1))
    assert [r.offset for r in all_records(log)] == list(range(61))
    log.close()


def test_flush_moves_the_recovery_point_and_flush_messages(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, config(**{"flush.messages": 5, "flush.ms": 1000}), clock)
    log.append(batch(3))
    assert log.recovery_point == 0
    log.append(batch(3))
    assert log.recovery_point == 6  # flush.messages reached
    log.append(batch(1))
    assert not log.maybe_flush(clock.now_ms + 10)
    assert log.maybe_flush(clock.now_ms + 2000)
    assert log.recovery_point == 7
    log.append(batch(1))
    log.flush(up_to=7)
    assert log.recovery_point == 7
    log.flush()
    assert log.recovery_point == 8
    log.close()


def test_roll_and_segments_view(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.roll() is log.segments[0]  # empty active segment: no-op
    log.append(batch(2))
    log.roll()
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert isinstance(log.segments, tuple)
    log.close()


def test_closed_log_refuses_work(tmp_path: Path) -> None:
    from log_engine.errors import KafkaStorageError

    log = open_log(tmp_path)
    log.close()
    with pytest.raises(KafkaStorageError):
        log.append(batch(1))
