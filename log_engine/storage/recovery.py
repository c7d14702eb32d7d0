"""Loading a partition directory after a clean or an unclean shutdown.

Order of work in :func:`load_segments`:

1. Finish or roll back interrupted file operations (left by a crash):

   - ``*.deleted``: segments already removed from the log -> unlink;
   - ``*.cleaned``: a cleaner output that never started its swap -> unlink
     (the old segments are intact);
   - ``<base>.log.swap``: a complete cleaner output. Every ``.log`` segment
     whose base offset lies in ``[base, swap's next offset)`` (or equals
     ``base``) is one it replaces -> unlink those, drop the swap's indexes and
     rename it to ``<base>.log``; its indexes are rebuilt below;
   - index ``.swap`` files without a ``.log.swap`` and index files without
     a ``.log`` -> unlink.

2. Open every ``<20 digits>.log`` segment. A segment whose index is missing or
   fails its sanity check is rebuilt from its log.

3. Without the clean-shutdown marker, recover every segment from the one
   holding the recovery point: check each batch's header, CRC and offsets,
   cut the log at the first torn or corrupt batch (truncate that file, delete
   later segments) and rebuild indexes. What was cut is logged.

Invariant afterwards: segments hold whole valid batches with increasing
offsets; nothing below the recovery point was cut unless it was corrupt.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from log_engine.errors import CorruptIndexError, CorruptMessageError
from log_engine.storage.config import LogConfig
from log_engine.storage.segment import (
    INDEX_EXT,
    LOG_EXT,
    SEGMENT_EXTS,
    TIME_INDEX_EXT,
    LogSegment,
    file_name,
)

log = logging.getLogger(__name__)

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"
_SEGMENT_FILE = re.compile(r"^(\d{20})(\.log|\.index|\.timeindex)(\.cleaned|\.swap|\.deleted)?$")


def load_segments(
    directory: Path, config: LogConfig, *, recovery_point: int, clean_shutdown: bool, now_ms: int
) -> list[LogSegment]:
    """Open (and if needed recover) the segments of ``directory``, oldest first."""
    finish_interrupted_operations(directory, config, now_ms)
    bases = sorted(_bases_with(directory, LOG_EXT, ""))
    segments: list[LogSegment] = []
    next_offset = 0
    for i, base in enumerate(bases):
        indexes_present = all(
            (directory / file_name(base, ext)).exists() for ext in (INDEX_EXT, TIME_INDEX_EXT)
        )
        segment = LogSegment(
            directory, base, config, now_ms=now_ms, fresh=False, active=i == len(bases) - 1
        )
        segments.append(segment)
        holds_recovery_point = i + 1 == len(bases) or bases[i + 1] > recovery_point
        must_recover = not clean_shutdown and holds_recovery_point
        if not must_recover and indexes_present and _loads(segment):
            next_offset = segment.next_offset
            continue
        if not must_recover:
            log.warning("%s: rebuilding the indexes of segment %d", directory.name, base)
        valid, cut = segment.recover(next_offset)
        next_offset = segment.next_offset
        if cut:
            _cut_tail(directory, segment, bases[i + 1 :], valid, cut)
            break
    for segment in segments[:-1]:
        segment.make_inactive()
    if segments:
        segments[-1].make_active(config)
    return segments


def _loads(segment: LogSegment) -> bool:
    try:
        segment.load()
    except (CorruptIndexError, CorruptMessageError) as exc:
        log.warning("segment %d failed its sanity check: %s", segment.base_offset, exc)
        return False
    return True


def _cut_tail(
    directory: Path, segment: LogSegment, later_bases: list[int], valid: int, cut: int
) -> None:
    """Log the cut and delete every segment after the one that was cut."""
    dropped_bytes = 0
    for base in later_bases:
        for ext in SEGMENT_EXTS:
            path = directory / file_name(base, ext)
            if ext == LOG_EXT and path.exists():
                dropped_bytes += path.stat().st_size
            path.unlink(missing_ok=True)
    log.warning(
        "%s: recovery cut segment %d at byte %d (%d bytes, offsets >= %d) and deleted %d later "
        "segment(s) (%d bytes)",
        directory.name,
        segment.base_offset,
        valid,
        cut,
        segment.next_offset,
        len(later_bases),
        dropped_bytes,
    )


def finish_interrupted_operations(directory: Path, config: LogConfig, now_ms: int) -> None:
    """Step 1 of loading: resolve ``.deleted``, ``.cleaned`` and ``.swap`` leftovers."""
    for path in directory.iterdir():
        if path.name.endswith((DELETED_SUFFIX, CLEANED_SUFFIX, ".tmp")):
            path.unlink(missing_ok=True)
    swaps = sorted(_bases_with(directory, LOG_EXT, SWAP_SUFFIX))
    for ext in (INDEX_EXT, TIME_INDEX_EXT):
        for base in _bases_with(directory, ext, SWAP_SUFFIX) - set(swaps):
            (directory / file_name(base, ext, SWAP_SUFFIX)).unlink()
    for base in swaps:
        _complete_swap(directory, base, config, now_ms)
    logs = _bases_with(directory, LOG_EXT, "")
    for ext in (INDEX_EXT, TIME_INDEX_EXT):
        for base in _bases_with(directory, ext, "") - logs:
            (directory / file_name(base, ext)).unlink()


def _complete_swap(directory: Path, base: int, config: LogConfig, now_ms: int) -> None:
    swap = LogSegment(
        directory, base, config, now_ms=now_ms, suffix=SWAP_SUFFIX, fresh=False, active=False
    )
    swap.recover(base)
    end = swap.next_offset
    swap.close()
    for ext in (INDEX_EXT, TIME_INDEX_EXT):
        (directory / file_name(base, ext, SWAP_SUFFIX)).unlink(missing_ok=True)
    replaced = [b for b in _bases_with(directory, LOG_EXT, "") if b == base or base <= b < end]
    for old in replaced:
        for ext in SEGMENT_EXTS:
            (directory / file_name(old, ext)).unlink(missing_ok=True)
    (directory / file_name(base, LOG_EXT, SWAP_SUFFIX)).rename(directory / file_name(base, LOG_EXT))
    log.warning(
        "%s: completed an interrupted compaction swap at offset %d (replaced segments %s)",
        directory.name,
        base,
        replaced,
    )


def _bases_with(directory: Path, ext: str, suffix: str) -> set[int]:
    bases = set()
    for path in directory.iterdir():
        match = _SEGMENT_FILE.match(path.name)
        if match and match.group(2) == ext and (match.group(3) or "") == suffix:
            bases.add(int(match.group(1)))
    return bases
