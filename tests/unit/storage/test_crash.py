"""A child process appends and flushes; the parent SIGKILLs it at random moments.

After every kill the log must reopen with everything the child reported as
flushed, continuous offsets from 0, only whole valid batches, and take appends.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from log_engine.records import decode_batch, iter_batches
from log_engine.storage import PartitionLog

from .helpers import Clock, config

_REPO = Path(__file__).resolve().parents[3]
_CFG = {"segment.bytes": 64 * 1024, "index.interval.bytes": 512, "flush.ms": 10**9}

_CHILD = textwrap.dedent(
    """
    import random, sys
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    from log_engine.records import Record, build_batch
    from log_engine.storage import LogConfig, PartitionLog

    cfg = LogConfig.from_properties({cfg!r})
    log = PartitionLog.open(Path({directory!r}), cfg, clean_shutdown=False)
    rng = random.Random({seed})
    print("ready", log.log_end_offset, flush=True)
    while True:
        batches = b"".join(
            build_batch([Record(b"k%d" % rng.randrange(50), b"v" * rng.randrange(1, 400))
                         for _ in range(rng.randrange(1, 20))])
            for _ in range(rng.randrange(1, 4))
        )
        log.append(batches)
        if rng.random() < 0.3:
            log.flush()
            print("flushed", log.log_end_offset, flush=True)
    """
)


def _run_child(directory: Path, seed: int, kill_after_s: float) -> tuple[int, int]:
    """Start the child, kill it ``kill_after_s`` after it is ready; (start LEO, flushed LEO)."""
    script = _CHILD.format(
        repo=str(_REPO),
        cfg={k: str(v) for k, v in _CFG.items()},
        directory=str(directory),
        seed=seed,
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None
    fd = child.stdout.fileno()
    buffer = b""
    start = flushed = -1
    deadline: float | None = None
    while True:
        timeout = 30.0 if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            pytest.fail(f"child exited: {child.stderr.read().decode()}")  # type: ignore[union-attr]
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            kind, value = line.decode().split()
            if kind == "ready":
                start = flushed = int(value)
                deadline = time.monotonic() + kill_after_s
            else:
                flushed = int(value)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    # whole lines written before the kill still count (the child flushed before printing);
    # a line cut by the kill (no newline) does not
    for line in (buffer + child.stdout.read()).split(b"\n")[:-1]:
        if line.startswith(b"flushed"):
            flushed = int(line.split()[1])
    child.stdout.close()
    child.stderr.close()  # type: ignore[union-attr]
    assert start >= 0, "child never became ready"
    return start, flushed


def _verify(directory: Path, flushed: int) -> int:
    log = PartitionLog.open(directory, config(**_CFG), now_ms=Clock(), clean_shutdown=False)
    try:
        assert log.log_end_offset >= flushed
        expected = 0
        offset = 0
        while offset < log.log_end_offset:
            data = log.read(offset, 1 << 20).read_bytes()
            for pos, header in iter_batches(data):  # checks every CRC
                _, records = decode_batch(data, pos)
                assert [r.offset for r in records] == list(range(expected, expected + len(records)))
                expected += len(records)
                offset = header.next_offset
        assert expected == log.log_end_offset
        return log.log_end_offset
    finally:
        log.close()


@pytest.mark.slow
def test_sigkill_during_appends_loses_nothing_flushed(tmp_path: Path) -> None:
    rng = random.Random(20241122)
    directory = tmp_path / "crash-0"
    end = 0
    for round_ in range(8):
        start, flushed = _run_child(directory, seed=round_, kill_after_s=rng.uniform(0.05, 0.6))
        assert start == end  # the child recovered exactly what the last check saw
        end = _verify(directory, flushed)
        assert end >= flushed
    assert end > 0
