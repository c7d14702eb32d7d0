"""One poisoned compacted partition must not stop log maintenance for the others (issue 15).

The poison is real bytes in a segment file: a batch whose CRC is valid but
whose last record's key length runs past the record, so decoding it (only the
cleaner decodes records) raises IndexError. Written into the file directly,
below any produce-time validation, as a bit flip or an older broker would.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from crc32c import crc32c

from log_engine.storage import LogManager, PartitionLog
from log_engine.storage.checkpoints import RECOVERY_POINT_CHECKPOINT, read_offsets
from log_engine.storage.uncleanable import INITIAL_BACKOFF_MS
from tests.unit.storage.helpers import BASE_TS, Clock, batch, config, keyed_batch

DAY_MS = 24 * 3600 * 1000
_KEY_LENGTH_AT = 65  # batch header (61) + record length, attributes, ts delta, offset delta
_CRC_AT, _CRC_FROM = 17, 21


def poison_batch_at(log_: PartitionLog, offset: int) -> None:
    """Rewrite the stored batch holding ``offset`` so its key runs off its record (CRC fixed)."""
    segment = log_.active_segment
    found = segment.find_batch(offset)
    assert found is not None
    position, header = found
    raw = bytearray(segment.read_at(position, header.size))
    assert raw[_KEY_LENGTH_AT] == 4  # zigzag(len(b"k0"))
    raw[_KEY_LENGTH_AT] = 0x2E  # 23 bytes: past the value and the record's end
    struct.pack_into(">I", raw, _CRC_AT, crc32c(bytes(raw[_CRC_FROM:])))
    os.pwrite(segment.fileno, raw, position)


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[LogManager]:
    manager = LogManager.open(tmp_path / "logs", config(), now_ms=Clock())
    yield manager
    manager.close()


def build_logs(manager: LogManager) -> dict[str, PartitionLog]:
    logs = {
        "poisoned": manager.get_or_create("poisoned", 0, {"cleanup.policy": "compact"}),
        "compacted": manager.get_or_create("compacted", 0, {"cleanup.policy": "compact"}),
        "retained": manager.get_or_create("retained", 0, {"retention.ms": "1000"}),
        "flushed": manager.get_or_create("flushed", 0, {"flush.ms": "1000"}),
    }
    for i in range(3):
        logs["poisoned"].append(keyed_batch([(b"k%d" % i, b"v" * 20)]))
    poison_batch_at(logs["poisoned"], 1)
    for log_ in logs.values():
        log_.roll()
        if log_ is not logs["poisoned"]:
            for _ in range(3):
                log_.append(keyed_batch([(b"same", b"v" * 20)]))
                log_.roll()
        log_.append(batch(1))  # an active segment past the closed ones
    return logs


def test_a_poisoned_partition_is_isolated_and_the_rest_of_maintenance_runs(
    manager: LogManager, caplog: pytest.LogCaptureFixture
) -> None:
    logs = build_logs(manager)
    now = BASE_TS + DAY_MS
    caplog.set_level(logging.DEBUG, logger="log_engine.storage")

    result = manager.run_maintenance(now)

    assert logs["retained"].log_start_offset == 3  # retention deleted its 3 old segments
    assert result.segments_deleted == 3
    assert result.logs_compacted == 1  # "compacted", after "poisoned" failed
    assert result.logs_flushed >= 1
    flushed = logs["flushed"]
    assert flushed.recovery_point == flushed.log_end_offset
    checkpoint = read_offsets(manager.log_dir / RECOVERY_POINT_CHECKPOINT)
    assert checkpoint[("flushed", 0)] == flushed.log_end_offset
    marked = manager.uncleanable.snapshot()
    assert list(marked) == [("poisoned", 0)]
    assert marked[("poisoned", 0)].error.startswith("IndexError")
    assert marked[("poisoned", 0)].retry_at_ms == now + INITIAL_BACKOFF_MS
    assert not any(p.name.endswith(".cleaned") for p in logs["poisoned"].directory.iterdir())

    manager.run_maintenance(now + 1)  # within the backoff: not retried
    assert manager.uncleanable.snapshot()[("poisoned", 0)].failures == 1
    manager.run_maintenance(now + INITIAL_BACKOFF_MS)  # retried, fails again, backs off more
    again = manager.uncleanable.snapshot()[("poisoned", 0)]
    assert again.failures == 2
    assert again.retry_at_ms == now + 3 * INITIAL_BACKOFF_MS

    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, "logged once, not at every pass"
    assert "poisoned-0" in errors[0].getMessage() and "uncleanable" in errors[0].getMessage()
    assert errors[0].exc_info is not None  # with the trace
    assert logs["poisoned"].read(0, 1 << 20).size_bytes > 0  # still served as it is


def test_a_partition_that_cleans_again_is_no_longer_marked(manager: LogManager) -> None:
    logs = build_logs(manager)
    now = BASE_TS + DAY_MS
    manager.run_maintenance(now)
    assert ("poisoned", 0) in manager.uncleanable.snapshot()
    logs["poisoned"].delete_records_before(logs["poisoned"].log_end_offset - 1)  # drop the poison
    manager.run_maintenance(now + INITIAL_BACKOFF_MS)
    assert manager.uncleanable.snapshot() == {}
