"""read() against a brute-force model over random batch sizes, offsets and limits."""

from __future__ import annotations

import random
from pathlib import Path

from log_engine.records import iter_batches

from .helpers import batch, config, open_log


def _model(
    batches: list[tuple[int, int, int]], offset: int, max_bytes: int, limit: int, min_one: bool
) -> list[int]:
    """Base offsets a read should return; ``batches`` are (base, last, size)."""
    chosen: list[int] = []
    total = 0
    for base, last, size in batches:
        if last < offset:
            continue
        if last >= limit:
            break
        if total + size > max_bytes and not (min_one and not chosen):
            break
        chosen.append(base)
        total += size
        if total >= max_bytes:
            break
    return chosen


def test_read_matches_the_model(tmp_path: Path) -> None:
    rng = random.Random(7)
    log = open_log(tmp_path, config(**{"segment.bytes": 6000, "index.interval.bytes": 300}))
    batches = []
    for _ in range(150):
        info = log.append(batch(rng.randrange(1, 6), value_size=rng.randrange(1, 300)))
        batches.append((info.first_offset, info.last_offset, info.size_bytes))
    assert len(log.segments) > 5
    end = log.log_end_offset
    for _ in range(600):
        offset = rng.randrange(0, end + 1)
        max_bytes = rng.choice([1, 100, 500, 2000, 7000, 50_000])
        limit = rng.choice([end, rng.randrange(0, end + 1)])
        min_one = rng.random() < 0.7
        result = log.read(offset, max_bytes, max_offset=limit, min_one_batch=min_one)
        data = result.read_bytes()
        got = [h.base_offset for _, h in iter_batches(data)]
        assert got == _model(batches, offset, max_bytes, limit, min_one), (offset, max_bytes, limit)
        assert result.size_bytes == len(data)
        if got:
            assert result.first_batch_offset == got[0]
    log.close()
