"""Compaction: newest record per key, offsets kept, tombstones expire, crash-safe swaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from log_engine.records import Compression, Record, build_batch, read_header
from log_engine.storage import PartitionLog, clean

from .helpers import BASE_TS, Clock, all_records, config, keyed_batch, open_log

_DAY_MS = 86_400_000
_CFG = {
    "cleanup.policy": "compact",
    "segment.bytes": 1500,
    "index.interval.bytes": 200,
    "min.cleanable.dirty.ratio": 0.01,
}


def _compacted_log(
    tmp_path: Path, clock: Clock, **overrides: str | int
) -> tuple[PartitionLog, dict]:  # type: ignore[type-arg]
    """30 batches of 4 records over 10 keys; returns the log and key -> newest (offset, value)."""
    log = open_log(tmp_path, config(**{**_CFG, **overrides}), clock)
    newest: dict[bytes, tuple[int, bytes | None]] = {}
    for i in range(30):
        items = [(b"key-%d" % ((i * 4 + j) % 10), b"value-%d-%d" % (i, j) * 5) for j in range(4)]
        info = log.append(keyed_batch(items, timestamp=clock.now_ms))
        for j, (key, value) in enumerate(items):
            newest[key] = (info.first_offset + j, value)
    return log, newest


def _check_valid(log: PartitionLog, newest: dict[bytes, tuple[int, bytes | None]]) -> None:
    """Offsets increase, nothing is duplicated, and each key's newest record is there."""
    records = all_records(log)
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets))
    latest = {r.key: (r.offset, r.value) for r in records}
    for key, (offset, value) in newest.items():
        if value is not None:
            assert latest[key] == (offset, value)


def test_compaction_keeps_the_newest_record_per_key(tmp_path: Path) -> None:
    clock = Clock()
    log, newest = _compacted_log(tmp_path, clock)
    active_base = log.segments[-1].base_offset
    before = log.size_bytes
    result = clean(log, clock.now_ms)
    assert result is not None and result.records_removed > 0
    assert log.size_bytes < before
    records = all_records(log)
    closed = [r for r in records if r.offset < active_base]
    assert len({r.key for r in closed}) == len(
        closed
    )  # one record per key below the active segment
    _check_valid(log, newest)
    assert [r.offset for r in records if r.offset >= active_base] == list(range(active_base, 120))
    assert log.log_end_offset == 120 and log.log_start_offset == 0
    assert clean(log, clock.now_ms) is None  # nothing dirty left
    log.close()
    reopened = open_log(tmp_path, config(**_CFG), clock, clean_shutdown=True)
    _check_valid(reopened, newest)
    reopened.close()


def test_tombstones_are_dropped_after_delete_retention(tmp_path: Path) -> None:
    clock = Clock()
    log, newest = _compacted_log(tmp_path, clock, **{"delete.retention.ms": _DAY_MS})
    info = log.append(keyed_batch([(b"key-3", None)], timestamp=clock.now_ms))
    newest[b"key-3"] = (info.first_offset, None)
    log.roll()
    clean(log, clock.now_ms, force=True)
    keys = [(r.key, r.value) for r in all_records(log)]
    assert (b"key-3", None) in keys and not [k for k, v in keys if k == b"key-3" and v is not None]
    log.append(keyed_batch([(b"other", b"x")], timestamp=clock.now_ms))
    log.roll()
    clean(log, clock.now_ms + _DAY_MS + 1, force=True)
    assert b"key-3" not in [r.key for r in all_records(log)]
    _check_valid(log, newest)
    log.close()


def test_dirty_ratio_and_compaction_lag_hold_cleaning_back(tmp_path: Path) -> None:
    clock = Clock()
    log, _ = _compacted_log(tmp_path, clock, **{"min.cleanable.dirty.ratio": 0.99})
    assert clean(log, clock.now_ms) is not None  # everything is dirty at first
    log.append(keyed_batch([(b"key-1", b"new")], timestamp=clock.now_ms))
    log.roll()
    assert clean(log, clock.now_ms) is None  # a little dirt only
    log.close()
    clock2 = Clock()
    lagged, _ = _compacted_log(tmp_path / "lag", clock2, **{"min.compaction.lag.ms": 60_000})
    assert clean(lagged, clock2.now_ms) is None
    assert clean(lagged, clock2.now_ms + 60_000) is not None
    lagged.close()


def test_delete_policy_does_not_compact(tmp_path: Path) -> None:
    clock = Clock()
    log, _ = _compacted_log(tmp_path, clock, **{"cleanup.policy": "delete"})
    assert clean(log, clock.now_ms, force=True) is None
    log.close()


def test_rewritten_batches_keep_codec_producer_and_keyless_records(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, config(**_CFG), clock)
    records = [Record(b"a", b"1" * 40), Record(None, b"keyless"), Record(b"a", b"2" * 40)]
    log.append(
        build_batch(
            records,
            compression=Compression.GZIP,
            producer_id=7,
            producer_epoch=1,
            base_sequence=0,
            now_ms=BASE_TS,
        )
    )
    log.append(keyed_batch([(b"b", b"3")]))
    log.roll()
    clean(log, clock.now_ms, force=True)
    data = log.read(0, 1 << 20).read_bytes()
    header = read_header(data)
    assert header.compression == Compression.GZIP
    assert (header.producer_id, header.producer_epoch, header.base_offset) == (7, 1, 0)
    assert [(r.offset, r.key) for r in all_records(log)] == [(1, None), (2, b"a"), (3, b"b")]
    log.close()


@pytest.mark.parametrize("step", ["cleaned", "swap", "deleted", "done"])
def test_a_crash_at_any_cleaner_step_leaves_a_valid_log(tmp_path: Path, step: str) -> None:
    clock = Clock()
    log, newest = _compacted_log(tmp_path, clock, **{"segment.bytes": 700})
    assert len(log.segments) > 4

    class Crash(Exception):
        pass

    def crash_at(name: str) -> None:
        if name == step:
            raise Crash(name)

    with pytest.raises(Crash):
        clean(log, clock.now_ms, after_step=crash_at)
    leftovers = sorted(p.name for p in (tmp_path / "topic-0").iterdir() if "." in p.name[20:])
    del log  # abandoned without closing, as a killed process would
    reopened = PartitionLog.open(
        tmp_path / "topic-0",
        config(**{**_CFG, "segment.bytes": 700}),
        now_ms=clock,
        clean_shutdown=False,
    )
    names = [p.name for p in (tmp_path / "topic-0").iterdir()]
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))], leftovers
    _check_valid(reopened, newest)
    assert reopened.log_end_offset == 120
    assert reopened.append(keyed_batch([(b"z", b"z")])).first_offset == 120
    assert clean(reopened, clock.now_ms, force=True) is not None
    _check_valid(reopened, newest)
    reopened.close()
