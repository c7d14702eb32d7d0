"""Opening after a crash: torn or corrupt tails are cut, broken indexes are rebuilt."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from log_engine.storage import PartitionLog

from .helpers import Clock, all_records, batch, config, open_log

_CFG = {"segment.bytes": 1200, "index.interval.bytes": 100}


def _crashed_log(tmp_path: Path, batches: int = 20) -> tuple[Path, list[tuple[int, int]]]:
    """Append and 'crash' (no close): returns the dir and (base offset, size) per segment."""
    log = open_log(tmp_path, config(**_CFG))
    for _ in range(batches):
        log.append(batch(2, value_size=100))
    layout = [(s.base_offset, s.size) for s in log.segments]
    return tmp_path / "topic-0", layout


def _reopen(tmp_path: Path, recovery_point: int = 0) -> PartitionLog:
    return PartitionLog.open(
        tmp_path / "topic-0",
        config(**_CFG),
        recovery_point=recovery_point,
        now_ms=Clock(),
        clean_shutdown=False,
    )


def _log_file(directory: Path, base: int) -> Path:
    return directory / f"{base:020d}.log"


def test_unclean_open_without_damage_keeps_everything(tmp_path: Path) -> None:
    _directory, layout = _crashed_log(tmp_path)
    log = _reopen(tmp_path)
    assert log.log_end_offset == 40 and log.recovery_point == 40
    assert [(s.base_offset, s.size) for s in log.segments] == layout
    assert [r.offset for r in all_records(log)] == list(range(40))
    log.close()


def test_torn_tail_is_cut_at_the_last_whole_batch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory, layout = _crashed_log(tmp_path)
    last_base, last_size = layout[-1]
    with open(_log_file(directory, last_base), "r+b") as f:
        f.truncate(last_size - 7)
    with caplog.at_level(logging.WARNING):
        log = _reopen(tmp_path)
    assert "recovery cut segment" in caplog.text
    assert log.log_end_offset == 38
    assert [r.offset for r in all_records(log)] == list(range(38))
    assert log.append(batch(1)).first_offset == 38
    log.close()


def test_flipped_byte_cuts_that_batch_and_every_later_segment(tmp_path: Path) -> None:
    directory, layout = _crashed_log(tmp_path)
    base, size = layout[-3]
    path = _log_file(directory, base)
    data = bytearray(path.read_bytes())
    data[size // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    log = _reopen(tmp_path)
    end = log.log_end_offset
    assert base <= end < layout[-2][0]
    assert [s.base_offset for s in log.segments][-1] == base
    assert not _log_file(directory, layout[-1][0]).exists()
    assert [r.offset for r in all_records(log)] == list(range(end))
    assert log.append(batch(2)).first_offset == end
    log.close()


def test_garbage_after_the_last_batch_is_cut(tmp_path: Path) -> None:
    directory, layout = _crashed_log(tmp_path)
    with open(_log_file(directory, layout[-1][0]), "ab") as f:
        f.write(b"\x00" * 30 + os.urandom(200))
    log = _reopen(tmp_path)
    assert log.log_end_offset == 40 and log.segments[-1].size == layout[-1][1]
    log.close()


def test_recovery_starts_at_the_recovery_point_segment(tmp_path: Path) -> None:
    directory, layout = _crashed_log(tmp_path)
    # Damage below the recovery point is not scanned (it was flushed): only later segments are.
    base, size = layout[-1]
    with open(_log_file(directory, base), "r+b") as f:
        f.truncate(size - 1)
    log = _reopen(tmp_path, recovery_point=layout[-2][0] + 1)
    assert log.log_end_offset == 38
    log.close()


@pytest.mark.parametrize("damage", ["missing", "garbage", "odd_size", "zeros"])
def test_broken_index_is_rebuilt_after_clean_shutdown(tmp_path: Path, damage: str) -> None:
    log = open_log(tmp_path, config(**_CFG))
    for _ in range(20):
        log.append(batch(2, value_size=100))
    log.close()
    directory = tmp_path / "topic-0"
    index = directory / "00000000000000000000.index"
    good = index.read_bytes()
    assert len(good) >= 16
    if damage == "missing":
        index.unlink()
        (directory / "00000000000000000000.timeindex").unlink()
    elif damage == "garbage":
        index.write_bytes(good[8:16] + good[:8] + good[16:])
    elif damage == "odd_size":
        index.write_bytes(good + b"\x01\x02\x03")
    else:
        index.write_bytes(good + b"\x00" * 64)
    log = PartitionLog.open(directory, config(**_CFG), clean_shutdown=True)
    assert log.segments[0].offset_index.entries * 8 == len(good)
    assert index.read_bytes()[: len(good)] == good
    for offset in range(log.log_end_offset):
        assert log.read(offset, 1).first_batch_offset in (offset, offset - 1)
    log.close()
    assert index.read_bytes() == good


def test_leftover_deleted_and_cleaned_files_are_removed(tmp_path: Path) -> None:
    directory, _layout = _crashed_log(tmp_path)
    (directory / "00000000000000000000.log.cleaned").write_bytes(b"partial")
    (directory / "00000000000000000000.index.cleaned").write_bytes(b"")
    (directory / "00000000000000000099.log.deleted").write_bytes(b"old")
    (directory / "00000000000000000007.index.swap").write_bytes(b"orphan")
    (directory / "00000000000000000123.index").write_bytes(b"")
    log = _reopen(tmp_path)
    names = sorted(p.name for p in directory.iterdir())
    assert not [n for n in names if n.endswith((".cleaned", ".deleted", ".swap"))]
    assert "00000000000000000123.index" not in names
    assert [r.offset for r in all_records(log)] == list(range(40))
    log.close()
