"""A full disk, for real (a small tmpfs): failed writes leave the log as it was (issue 15).

Each test fills the file system the log lives on, makes a write fail the way
it does in production (a short write then ENOSPC, no page for an index entry,
no room for a checkpoint) and checks that nothing changed on disk or in
memory, that the error is KAFKA_STORAGE_ERROR and that the directory comes
back after a restart once space is free.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from log_engine.errors import KafkaError, LogDirOfflineError
from log_engine.storage import LogManager, PartitionLog
from log_engine.storage.checkpoints import read_offsets, write_offsets
from log_engine.storage.partition_log import CLEAN_SHUTDOWN_FILE
from log_engine.storage.segment import LOG_EXT
from tests.support.small_fs import SmallFilesystem, mounted_or_fail
from tests.unit.storage.helpers import Clock, batch, config, open_log

FS_BYTES = 2 << 20


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[SmallFilesystem]:
    with mounted_or_fail(tmp_path / "mnt", FS_BYTES) as fs:
        yield fs


def log_file_size(log_: PartitionLog) -> int:
    return os.stat(log_.active_segment.path(LOG_EXT)).st_size


def read_all(log_: PartitionLog) -> bytes:
    return log_.read(log_.log_start_offset, 1 << 30).read_bytes()


def test_short_write_then_enospc_leaves_the_segment_as_it_was(small_fs: SmallFilesystem) -> None:
    log_ = open_log(small_fs.root / "logs", config())
    for _ in range(10):
        log_.append(batch(5, value_size=200))
    size, end, data = log_.active_segment.size, log_.log_end_offset, read_all(log_)
    small_fs.fill()
    small_fs.free(2 * 4096)  # room for part of the next batch only: a short write

    with pytest.raises((OSError, KafkaError)) as failed:
        log_.append(batch(100, value_size=200))  # ~21 KB

    assert log_.active_segment.size == size, "the torn batch was counted into the segment"
    assert log_file_size(log_) == size, "the torn bytes were left in the file"
    assert log_.log_end_offset == end
    assert isinstance(failed.value, LogDirOfflineError)
    assert failed.value.errno == 56  # KAFKA_STORAGE_ERROR
    assert read_all(log_) == data  # acknowledged data stays readable

    small_fs.free()
    with pytest.raises(LogDirOfflineError):  # offline for writes until a restart
        log_.append(batch(1))
    log_.close()
    reopened = open_log(small_fs.root / "logs", config(), clean_shutdown=False)
    assert reopened.log_end_offset == end
    assert read_all(reopened) == data
    assert reopened.append(batch(1)).first_offset == end
    reopened.close()


SIGBUS_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from log_engine.errors import LogDirOfflineError
    from tests.support.small_fs import SmallFilesystem, mounted_or_fail
    from tests.unit.storage.helpers import batch, config, open_log

    fs = SmallFilesystem(Path(sys.argv[1]), 0)
    log_ = open_log(fs.root / "logs", config(**{"index.interval.bytes": 0}))
    log_.append(batch(1))       # a partly used page of the log; no index entry yet
    fs.fill()
    try:
        log_.append(batch(1))   # fits the log's page; its index entry needs a new page
    except LogDirOfflineError as exc:
        print("refused:", exc)
        print("entries:", log_.active_segment.offset_index.entries, log_.log_end_offset)
    """
)


def test_an_index_entry_on_a_full_disk_is_an_error_not_a_sigbus(
    small_fs: SmallFilesystem,
) -> None:
    """A store through the index's mmap into an unallocated page kills the process."""
    done = subprocess.run(
        [sys.executable, "-c", SIGBUS_SCRIPT, str(small_fs.root)],
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, f"died with {done.returncode}: {done.stderr[-2000:]}"
    assert "refused:" in done.stdout and "No space left" in done.stdout
    assert "entries: 0 1" in done.stdout  # index and log end offset as before the append


def test_a_failed_checkpoint_write_keeps_the_good_file(small_fs: SmallFilesystem) -> None:
    path = small_fs.root / "recovery-point-offset-checkpoint"
    write_offsets(path, {("t", 0): 42})
    good = path.read_bytes()
    small_fs.fill()
    with pytest.raises(OSError):
        write_offsets(path, {(f"topic-{i}", i): i for i in range(2000)})
    assert path.read_bytes() == good
    assert read_offsets(path) == {("t", 0): 42}
    assert not path.with_name(path.name + ".tmp").exists(), "the failed temp file holds space"


def test_an_offline_log_dir_refuses_writes_everywhere_and_recovers_after_restart(
    small_fs: SmallFilesystem,
) -> None:
    log_dir = small_fs.root / "logs"
    clock = Clock()
    manager = LogManager.open(log_dir, config(), now_ms=clock)
    full, other = manager.get_or_create("full", 0), manager.get_or_create("other", 0)
    for _ in range(5):
        full.append(batch(5, value_size=200))
        other.append(batch(5, value_size=200))
    expected = {"full": read_all(full), "other": read_all(other)}
    small_fs.fill()
    small_fs.free(4096)

    with pytest.raises((OSError, KafkaError)):
        full.append(batch(100, value_size=200))
    small_fs.free()

    with pytest.raises(LogDirOfflineError):  # every partition of the dir, space or not
        other.append(batch(1))
    assert manager.state.offline
    manager.run_maintenance(clock.now_ms + 10 * 24 * 3600 * 1000)  # does nothing, raises nothing
    manager.close()
    assert not (log_dir / CLEAN_SHUTDOWN_FILE).exists(), "an offline dir must be recovered"

    manager = LogManager.open(log_dir, config(), now_ms=clock)
    assert not manager.state.offline
    for name, data in expected.items():
        log_ = manager.get(name, 0)
        assert log_ is not None
        assert read_all(log_) == data
        assert log_.append(batch(1)).first_offset == 25
    manager.close()
