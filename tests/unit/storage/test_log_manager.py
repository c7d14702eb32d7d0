"""The log manager: discovery, configs, checkpoints, maintenance, locking, clean shutdown."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from log_engine.errors import InvalidConfigError, InvalidTopicError, LogDirLockedError
from log_engine.storage import LogConfig, LogManager
from log_engine.storage.checkpoints import read_offsets

from .helpers import BASE_TS, Clock, all_records, batch, config, keyed_batch

_REPO = Path(__file__).resolve().parents[3]


def test_create_discover_and_reopen(tmp_path: Path) -> None:
    manager = LogManager.open(tmp_path, config(), now_ms=Clock())
    a = manager.get_or_create("orders-eu-west", 0)
    b = manager.get_or_create("orders-eu-west", 1)
    c = manager.get_or_create("x", 3)
    assert manager.get_or_create("x", 3) is c
    a.append(batch(3))
    b.append(batch(1))
    assert manager.get("nope", 0) is None
    assert set(manager.partitions()) == {("orders-eu-west", 0), ("orders-eu-west", 1), ("x", 3)}
    manager.close()
    assert (tmp_path / ".kafka_cleanshutdown").exists()
    assert read_offsets(tmp_path / "recovery-point-offset-checkpoint") == {
        ("orders-eu-west", 0): 3,
        ("orders-eu-west", 1): 1,
        ("x", 3): 0,
    }
    (tmp_path / "not-a-partition").mkdir()
    manager = LogManager.open(tmp_path, config(), now_ms=Clock())
    assert not (tmp_path / ".kafka_cleanshutdown").exists()  # removed while open
    assert set(manager.partitions()) == {("orders-eu-west", 0), ("orders-eu-west", 1), ("x", 3)}
    assert manager.get("orders-eu-west", 0).log_end_offset == 3  # type: ignore[union-attr]
    manager.close()


def test_invalid_topic_names(tmp_path: Path) -> None:
    manager = LogManager.open(tmp_path, config())
    for topic in ["", ".", "..", "a/b", "x" * 250, "spaces are bad"]:
        with pytest.raises(InvalidTopicError):
            manager.get_or_create(topic, 0)
    with pytest.raises(InvalidTopicError):
        manager.get_or_create("ok", -1)
    manager.close()


def test_topic_overrides_are_persisted_and_applied(tmp_path: Path) -> None:
    manager = LogManager.open(tmp_path, config(**{"retention.ms": 1000}))
    log = manager.get_or_create("t", 0, {"cleanup.policy": "compact"})
    assert log.config.compact and log.config.retention_ms == 1000
    manager.set_topic_overrides("t", {"segment.bytes": "5000"})
    assert log.config.segment_bytes == 5000 and not log.config.compact
    assert manager.topic_overrides("t") == {"segment.bytes": "5000"}
    with pytest.raises(InvalidConfigError):
        manager.set_topic_overrides("t", {"segment.bytes": "lots"})
    with pytest.raises(ValueError):
        manager.set_topic_overrides("t", {"no.such.key": "1"})
    assert manager.topic_config("t").segment_bytes == 5000
    assert manager.default_config_properties()["retention.ms"] == "1000"
    manager.close()
    assert json.loads((tmp_path / "topic-configs.json").read_text()) == {
        "t": {"segment.bytes": "5000"}
    }
    manager = LogManager.open(tmp_path, LogConfig())
    assert manager.get("t", 0).config.segment_bytes == 5000  # type: ignore[union-attr]
    manager.close()


def test_delete_partition(tmp_path: Path) -> None:
    manager = LogManager.open(tmp_path, config())
    manager.get_or_create("t", 0).append(batch(1))
    manager.delete_partition("t", 0)
    assert manager.get("t", 0) is None and not (tmp_path / "t-0").exists()
    manager.delete_partition("t", 0)  # absent: no-op
    manager.close()


def test_maintenance_flushes_retains_compacts_and_deletes_files(tmp_path: Path) -> None:
    clock = Clock()
    cfg = config(
        **{
            "segment.bytes": 1000,
            "file.delete.delay.ms": 5000,
            "flush.ms": 1000,
            "retention.ms": 3_600_000,
            "min.cleanable.dirty.ratio": 0.01,
        }
    )
    manager = LogManager.open(tmp_path, cfg, now_ms=clock)
    plain = manager.get_or_create("plain", 0)
    compacted = manager.get_or_create("compacted", 0, {"cleanup.policy": "compact"})
    for i in range(20):
        plain.append(batch(2, value_size=100, timestamp=BASE_TS))
        compacted.append(keyed_batch([(b"k%d" % (i % 3), b"v" * 100)], timestamp=BASE_TS))
    clock.advance(2000)
    result = manager.run_maintenance()
    assert result.logs_flushed == 2 and result.logs_compacted == 1
    assert plain.recovery_point == plain.log_end_offset
    assert {r.key for r in all_records(compacted)} == {b"k0", b"k1", b"k2"}
    clock.advance(3_600_000)
    result = manager.run_maintenance()
    assert result.segments_deleted > 0 and len(plain.segments) == 1
    assert (
        read_offsets(tmp_path / "log-start-offset-checkpoint")[("plain", 0)]
        == plain.log_start_offset
    )
    assert list((tmp_path / "plain-0").glob("*.deleted"))
    clock.advance(5000)
    assert manager.run_maintenance().files_removed > 0
    assert not list((tmp_path / "plain-0").glob("*.deleted"))
    manager.close()


def test_unclean_shutdown_recovers_from_checkpoints(tmp_path: Path) -> None:
    manager = LogManager.open(tmp_path, config(**{"segment.bytes": 1000}))
    log = manager.get_or_create("t", 0)
    for _ in range(10):
        log.append(batch(2, value_size=100))
    log.flush()
    manager.checkpoint()
    log.append(batch(2, value_size=100))
    segment = log.segments[-1]
    with open(segment.path(".log"), "r+b") as f:  # a torn write after the checkpoint
        f.truncate(segment.size - 10)
    # "crash": release the lock as the kernel would, without close()
    import os

    os.close(manager._lock_fd)
    manager = LogManager.open(tmp_path, config(**{"segment.bytes": 1000}))
    log = manager.get("t", 0)  # type: ignore[assignment]
    assert log.log_end_offset == 20
    assert [r.offset for r in all_records(log)] == list(range(20))
    manager.close()


def test_a_second_process_cannot_open_a_locked_dir(tmp_path: Path) -> None:
    manager = LogManager.open(tmp_path, config())
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(_REPO)!r})
        from pathlib import Path
        from log_engine.errors import LogDirLockedError
        from log_engine.storage import LogConfig, LogManager
        try:
            LogManager.open(Path({str(tmp_path)!r}), LogConfig())
        except LogDirLockedError:
            print("locked")
        else:
            print("opened")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "locked", out.stderr
    with pytest.raises(LogDirLockedError):
        LogManager.open(tmp_path, config())  # a second owner in this process too
    manager.close()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "opened", out.stderr
