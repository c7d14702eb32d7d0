"""Which old segments retention deletes (``cleanup.policy`` containing ``delete``).

Three rules, each selecting a prefix of the closed segments (oldest first):

- ``retention.ms``: the segment's newest batch timestamp (its file mtime when
  it has none) is more than ``retention.ms`` before now;
- ``retention.bytes``: while the whole log (active segment included) is larger
  than ``retention.bytes`` by at least the segment's size;
- log start offset: the next segment starts at or below the log start offset,
  so no offset in this one is readable anymore (applies to every policy).

The union of the prefixes is deleted. The active segment is never deleted:
it keeps the log end offset and takes the next append.
"""

from __future__ import annotations

from collections.abc import Sequence

from log_engine.storage.config import LogConfig
from log_engine.storage.segment import LogSegment


def segments_to_delete(
    segments: Sequence[LogSegment], config: LogConfig, now_ms: int, log_start_offset: int
) -> int:
    """How many of the oldest segments retention deletes now (never the last one)."""
    closed = segments[:-1]
    counts = [below_log_start(segments, log_start_offset)]
    if config.delete:
        counts.append(_expired_by_time(closed, config.retention_ms, now_ms))
        counts.append(_over_size(closed, config.retention_bytes, segments))
    return max(counts)


def below_log_start(segments: Sequence[LogSegment], log_start_offset: int) -> int:
    """How many of the oldest segments hold only offsets below ``log_start_offset``."""
    count = 0
    while count + 1 < len(segments) and segments[count + 1].base_offset <= log_start_offset:
        count += 1
    return count


def _expired_by_time(closed: Sequence[LogSegment], retention_ms: int, now_ms: int) -> int:
    if retention_ms < 0:
        return 0
    count = 0
    while count < len(closed) and now_ms - closed[count].largest_timestamp > retention_ms:
        count += 1
    return count


def _over_size(
    closed: Sequence[LogSegment], retention_bytes: int, all_segments: Sequence[LogSegment]
) -> int:
    if retention_bytes < 0:
        return 0
    excess = sum(s.size for s in all_segments) - retention_bytes
    count = 0
    while count < len(closed) and excess - closed[count].size >= 0:
        excess -= closed[count].size
        count += 1
    return count
