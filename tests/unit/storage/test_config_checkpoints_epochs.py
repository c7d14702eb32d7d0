"""LogConfig parsing, checkpoint files, the leader epoch cache and index files."""

from __future__ import annotations

from pathlib import Path

import pytest

from log_engine.errors import InvalidConfigError, KafkaStorageError
from log_engine.invariants import InvariantViolation
from log_engine.storage import LeaderEpochCache, LogConfig
from log_engine.storage.checkpoints import (
    read_checkpoint,
    read_offsets,
    write_offsets,
)
from log_engine.storage.offset_index import OffsetIndex
from log_engine.storage.time_index import TimeIndex


def test_defaults_are_kafkas_except_flush_ms() -> None:
    props = LogConfig().to_properties()
    assert props["segment.bytes"] == str(1 << 30)
    assert props["segment.ms"] == str(7 * 86_400_000) == props["retention.ms"]
    assert props["segment.index.bytes"] == str(10 << 20)
    assert props["max.message.bytes"] == "1048588"
    assert props["flush.messages"] == str(2**63 - 1)
    assert props["flush.ms"] == "1000"
    assert props["cleanup.policy"] == "delete"
    assert LogConfig.from_properties(props) == LogConfig()


def test_every_field_has_an_alias_and_a_description() -> None:
    for name, field in LogConfig.model_fields.items():
        assert field.alias and "." in field.alias, name
        assert field.description, name


def test_from_properties_parses_strings() -> None:
    cfg = LogConfig.from_properties(
        {
            "segment.bytes": " 4096 ",
            "cleanup.policy": "delete,compact",
            "min.cleanable.dirty.ratio": "0.25",
            "message.timestamp.type": "LogAppendTime",
        }
    )
    assert cfg.segment_bytes == 4096 and cfg.cleanup_policy == "compact,delete"
    assert cfg.compact and cfg.delete and cfg.log_append_time
    assert cfg.min_cleanable_dirty_ratio == 0.25
    assert cfg.with_overrides({"retention.ms": "-1"}).retention_ms == -1


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"segment.byte": "1"}, "unknown topic config(s): segment.byte"),
        ({"segment.bytes": "big"}, "segment.bytes='big'"),
        ({"retention.ms": "-2"}, "retention.ms='-2'"),
        ({"cleanup.policy": "shred"}, "cleanup.policy='shred'"),
        ({"min.cleanable.dirty.ratio": "1.5"}, "min.cleanable.dirty.ratio"),
        ({"message.timestamp.type": "Whenever"}, "message.timestamp.type"),
        ({"compression.type": "brotli"}, "compression.type"),
    ],
)
def test_from_properties_rejects_with_clear_messages(props: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=None) as info:
        LogConfig.from_properties(props)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and info.value.errno == 40


def test_checkpoint_format_and_atomic_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_offsets(path, {("b-topic", 1): 42, ("a", 0): 7})
    assert path.read_text() == "0\n2\na 0 7\nb-topic 1 42\n"
    assert read_offsets(path) == {("a", 0): 7, ("b-topic", 1): 42}
    write_offsets(path, {})
    assert read_offsets(path) == {} and not list(tmp_path.glob("*.tmp"))
    assert read_offsets(tmp_path / "missing") == {}


@pytest.mark.parametrize("text", ["1\n0\n", "0\n2\na 0 1\n", "0\nx\n", "0\n1\na 0\n", ""])
def test_malformed_checkpoints(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cp"
    path.write_text(text)
    with pytest.raises(KafkaStorageError):
        read_checkpoint(path, 3)


def test_leader_epoch_cache(tmp_path: Path) -> None:
    end = [100]
    cache = LeaderEpochCache.in_directory(tmp_path, lambda: end[0])
    assert cache.latest_epoch is None and cache.end_offset_for(0) == (-1, -1)
    cache.assign(1, 0)
    cache.assign(1, 5)  # same epoch: ignored
    cache.assign(3, 20)
    cache.assign(2, 30)  # older epoch: ignored
    cache.assign(5, 60)
    assert cache.entries == [(1, 0), (3, 20), (5, 60)]
    assert cache.end_offset_for(0) == (-1, -1)
    assert cache.end_offset_for(1) == (1, 20)
    assert cache.end_offset_for(4) == (3, 60)
    assert cache.end_offset_for(5) == (5, 100)
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n3\n1 0\n3 20\n5 60\n"
    cache.truncate_from_end(60)
    assert cache.entries == [(1, 0), (3, 20)]
    cache.truncate_from_start(25)
    assert cache.entries == [(3, 25)]
    cache.assign(7, 25)  # a new epoch at the same start replaces the older one
    assert cache.entries == [(7, 25)]
    reloaded = LeaderEpochCache.in_directory(tmp_path, lambda: 0)
    assert reloaded.entries == [(7, 25)]
    cache.clear()
    assert LeaderEpochCache.in_directory(tmp_path, lambda: 0).entries == []


def test_offset_index_append_lookup_trim(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "00000000000000000100.index", 100, 80, active=True)
    assert (
        index.max_entries == 10 and (tmp_path / "00000000000000000100.index").stat().st_size == 80
    )
    for i in range(5):
        index.append(100 + i * 10, i * 1000)
    assert index.lookup(99) == (100, 0)
    assert index.lookup(125) == (120, 2000)
    assert index.lookup(10**6) == (140, 4000)
    with pytest.raises(InvariantViolation):
        index.append(140, 5000)  # offsets must increase
    index.truncate_to(130)
    assert index.last_entry() == (120, 2000)
    index.sanity_check(log_size=2001)
    index.close()
    assert (tmp_path / "00000000000000000100.index").stat().st_size == 24


def test_time_index_keeps_the_final_slot(tmp_path: Path) -> None:
    index = TimeIndex(tmp_path / "00000000000000000000.timeindex", 0, 36, active=True)
    index.maybe_append(10, 1)
    index.maybe_append(10, 2)  # not newer: skipped
    index.maybe_append(20, 5)
    assert index.is_full and index.entries == 2
    index.maybe_append(30, 6)  # only the final entry may use the last slot
    assert index.entries == 2
    index.maybe_append(30, 6, final=True)
    assert index.lookup(25) == (20, 5) and index.lookup(5) == (-1, 0)
    index.truncate_to(5)
    assert index.last_entry() == (10, 1)
    index.sanity_check()
    index.close()
