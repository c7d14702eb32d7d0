"""truncate_to, truncate_fully_and_start_at, delete_records_before and retention."""

from __future__ import annotations

from pathlib import Path

import pytest

from log_engine.errors import OffsetOutOfRangeError

from .helpers import BASE_TS, Clock, all_records, batch, config, open_log

_HOUR_MS = 3_600_000


def _filled(tmp_path: Path, clock: Clock | None = None, **cfg: str | int):  # type: ignore[no-untyped-def]
    log = open_log(tmp_path, config(**{"segment.bytes": 1000, **cfg}), clock or Clock())
    for _ in range(20):
        log.append(batch(2, value_size=100), leader_epoch=1)
    return log


def test_truncate_to_drops_the_tail_across_segments(tmp_path: Path) -> None:
    log = _filled(tmp_path)
    log.leader_epochs.assign(2, 30)
    segments_before = len(log.segments)
    log.truncate_to(14)
    assert log.log_end_offset == 14
    assert [r.offset for r in all_records(log)] == list(range(14))
    assert len(log.segments) < segments_before
    assert log.leader_epochs.entries == [(1, 0)]
    info = log.append(batch(1))
    assert info.first_offset == 14
    assert [r.offset for r in all_records(log)] == list(range(15))
    log.close()


def test_truncate_to_mid_batch_drops_that_whole_batch(tmp_path: Path) -> None:
    log = _filled(tmp_path)
    log.truncate_to(15)  # batches hold [14, 15]
    assert log.log_end_offset == 14
    log.truncate_to(100)  # past the end: nothing to do
    assert log.log_end_offset == 14
    log.close()


def test_truncate_then_reopen(tmp_path: Path) -> None:
    log = _filled(tmp_path)
    log.truncate_to(10)
    log.close()
    log = open_log(tmp_path, config(**{"segment.bytes": 1000}), clean_shutdown=True)
    assert log.log_end_offset == 10
    assert [r.offset for r in all_records(log)] == list(range(10))
    log.close()


def test_truncate_fully_and_start_at(tmp_path: Path) -> None:
    log = _filled(tmp_path)
    log.truncate_fully_and_start_at(500)
    assert (log.log_start_offset, log.log_end_offset, len(log.segments)) == (500, 500, 1)
    assert log.leader_epochs.entries == []
    assert log.append(batch(1)).first_offset == 500
    with pytest.raises(OffsetOutOfRangeError):
        log.read(10, 100)
    log.close()
    log = open_log(tmp_path, config(**{"segment.bytes": 1000}), log_start_offset=500)
    assert (log.log_start_offset, log.log_end_offset) == (500, 501)
    log.close()


def test_delete_records_before(tmp_path: Path) -> None:
    log = _filled(tmp_path)
    segments_before = len(log.segments)
    assert log.delete_records_before(13) == 13
    assert log.log_start_offset == 13
    assert len(log.segments) < segments_before
    assert log.segments[0].base_offset <= 13
    with pytest.raises(OffsetOutOfRangeError):
        log.read(12, 100)
    assert all_records(log)[0].offset == 12  # whole batch [12, 13] is returned
    assert log.delete_records_before(5) == 13  # never moves back
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(41)
    assert log.delete_records_before(40) == 40
    assert log.read(40, 100).slices == []
    log.close()


def test_deleted_segments_stay_readable_until_the_delay(tmp_path: Path) -> None:
    clock = Clock()
    log = _filled(tmp_path, clock, **{"file.delete.delay.ms": 1000})
    handed_out = log.read(0, 1 << 20)
    expected = handed_out.read_bytes()
    log.delete_records_before(30)
    directory = tmp_path / "topic-0"
    assert list(directory.glob("*.log.deleted"))
    assert handed_out.read_bytes() == expected
    assert log.remove_deleted_segments(clock.now_ms + 999) == 0
    assert log.remove_deleted_segments(clock.now_ms + 1000) > 0
    assert not list(directory.glob("*.deleted"))
    log.close()


def test_retention_by_time(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, config(**{"segment.bytes": 1000, "retention.ms": _HOUR_MS}), clock)
    for i in range(20):
        log.append(batch(2, value_size=100, timestamp=BASE_TS + i * 60_000))
    segments = list(log.segments)
    assert log.apply_retention(BASE_TS + _HOUR_MS) == 0
    now = segments[2].max_timestamp + _HOUR_MS + 1
    assert log.apply_retention(now) == 3
    assert log.log_start_offset == segments[3].base_offset
    assert all_records(log)[0].offset == segments[3].base_offset
    far_future = BASE_TS + 100 * _HOUR_MS
    deleted = log.apply_retention(far_future)
    assert deleted == len(segments) - 4 and len(log.segments) == 1  # never the active one
    log.close()


def test_retention_by_bytes(tmp_path: Path) -> None:
    log = _filled(tmp_path, **{"retention.bytes": 2500})
    total = log.size_bytes
    deleted = log.apply_retention(BASE_TS)
    assert deleted > 0
    assert log.size_bytes - log.segments[0].size < 2500 < log.size_bytes  # Kafka: whole segments
    assert log.size_bytes < total
    assert log.log_start_offset == log.segments[0].base_offset
    log.close()


def test_retention_off_for_compact_only_and_infinite(tmp_path: Path) -> None:
    log = _filled(tmp_path, **{"retention.ms": -1, "retention.bytes": -1})
    assert log.apply_retention(BASE_TS + 10**12) == 0
    log.update_config(
        config(**{"segment.bytes": 1000, "retention.ms": 1, "cleanup.policy": "compact"})
    )
    assert log.apply_retention(BASE_TS + 10**12) == 0
    log.close()
