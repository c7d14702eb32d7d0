"""Log compaction (``cleanup.policy`` containing ``compact``): keep the newest record per key.

One pass over a :class:`~log_engine.storage.partition_log.PartitionLog`:

1. The cleanable range is the closed segments from the log start up to (not
   including) the first one newer than ``min.compaction.lag.ms``; the active
   segment is never cleaned. The *dirty* part starts at the log's
   ``cleaner_offset`` (everything before it was compacted already). Nothing
   runs until dirty bytes / cleanable bytes reach ``min.cleanable.dirty.ratio``.
2. An offset map ``key -> newest offset`` is built from the dirty part; this
   is the only place the engine decodes records.
3. Cleanable segments are grouped (each group fits one segment) and each group
   is rewritten into ``<base>.log.cleaned``: a record is kept if it has no key,
   or no newer offset for its key is in the map. A kept tombstone (null value)
   is dropped once its segment is older than ``delete.retention.ms``. Batches
   that keep every record are copied byte for byte; others are rebuilt with
   :func:`~log_engine.records.build_batch` (``keep_offsets``: offsets never
   change) keeping producer id/epoch, sequence, epoch and compression.
   Control batches are copied as they are.
4. The group is swapped in crash-safely (``.cleaned`` -> ``.swap`` -> old
   segments ``.deleted`` -> final name), oldest group first, so a crash at any
   step leaves either the old or the new records of each group; recovery
   finishes or rolls back the swap.

Known limits: records without a key are kept (producers cannot be refused
without decoding on produce); aborted transactional records are not removed;
empty batches are not kept for idempotent producers' state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from log_engine.records import Compression, Record, build_batch, decode_batch, read_header
from log_engine.storage.config import LogConfig
from log_engine.storage.partition_log import PartitionLog
from log_engine.storage.recovery import CLEANED_SUFFIX
from log_engine.storage.segment import LogSegment
from log_engine.storage.types import BatchInfo

log = logging.getLogger(__name__)

_INT32_MAX = 2**31 - 1
_WRITE_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class CleanResult:
    """What one compaction pass did to a log."""

    segments_before: int
    segments_after: int
    bytes_before: int
    bytes_after: int
    records_removed: int


@dataclass(slots=True)
class _Counts:
    bytes_before: int = 0
    bytes_after: int = 0
    records_removed: int = 0


def clean(
    log_: PartitionLog,
    now_ms: int,
    *,
    force: bool = False,
    after_step: Callable[[str], None] = lambda step: None,
) -> CleanResult | None:
    """Compact ``log_`` once if its policy and dirty ratio call for it (``force``: ignore ratio).

    ``after_step`` is called after each swap step ("cleaned", "swap",
    "deleted", "done") so tests can crash the cleaner between them.
    """
    config = log_.config
    if not config.compact:
        return None
    truncations = log_.truncation_count
    cleanable = _cleanable_segments(log_.segments, config, now_ms)
    if not cleanable:
        return None
    end_offset = cleanable[-1].next_offset
    first_dirty = max(log_.cleaner_offset, log_.log_start_offset)
    dirty = [s for s in cleanable if s.next_offset > first_dirty]
    total_bytes = sum(s.size for s in cleanable)
    dirty_bytes = sum(s.size for s in dirty)
    if not dirty or (not force and dirty_bytes < config.min_cleanable_dirty_ratio * total_bytes):
        return None
    offsets = build_offset_map(dirty)
    counts = _Counts()
    groups = group_segments(cleanable, config.segment_bytes)
    for group in groups:
        cleaned = _clean_group(log_, group, offsets, counts, now_ms)
        after_step("cleaned")
        if not log_.replace_segments(
            group, cleaned, truncation_count=truncations, after_step=after_step
        ):
            log.info("%s: log changed during cleaning; pass abandoned", log_.directory.name)
            return None
    log_.cleaner_offset = max(log_.cleaner_offset, end_offset)
    result = CleanResult(
        len(cleanable), len(groups), counts.bytes_before, counts.bytes_after, counts.records_removed
    )
    log.info("%s: compacted %s", log_.directory.name, result)
    return result


def _cleanable_segments(
    segments: Sequence[LogSegment], config: LogConfig, now_ms: int
) -> list[LogSegment]:
    cleanable = []
    lag_ms = config.min_compaction_lag_ms
    for segment in segments[:-1]:
        if lag_ms > 0 and now_ms - segment.largest_timestamp < lag_ms:
            break
        cleanable.append(segment)
    return cleanable


def build_offset_map(segments: Sequence[LogSegment]) -> dict[bytes, int]:
    """``key -> newest offset`` over the records of ``segments`` (control batches skipped)."""
    offsets: dict[bytes, int] = {}
    for segment in segments:
        for pos, header in segment.iter_batches():
            if header.is_control:
                continue
            _, records = decode_batch(segment.read_at(pos, header.size), verify_crc=False)
            for record in records:
                if record.key is not None:
                    offsets[record.key] = record.offset
    return offsets


def group_segments(segments: Sequence[LogSegment], max_bytes: int) -> list[list[LogSegment]]:
    """Consecutive runs whose sizes add up to at most ``max_bytes`` (and int32 offsets)."""
    groups: list[list[LogSegment]] = []
    for segment in segments:
        current = groups[-1] if groups else None
        if (
            current is not None
            and sum(s.size for s in current) + segment.size <= max_bytes
            and segment.next_offset - current[0].base_offset <= _INT32_MAX
        ):
            current.append(segment)
        else:
            groups.append([segment])
    return groups


def _clean_group(
    log_: PartitionLog,
    group: list[LogSegment],
    offsets: dict[bytes, int],
    counts: _Counts,
    now_ms: int,
) -> LogSegment:
    """Write the retained records of ``group`` into a ``.cleaned`` segment (fsynced)."""
    cleaned = LogSegment(
        log_.directory,
        group[0].base_offset,
        log_.config,
        now_ms=now_ms,
        suffix=CLEANED_SUFFIX,
        fresh=True,
        active=True,
    )
    try:
        _copy_retained(log_, group, offsets, counts, now_ms, cleaned)
    except BaseException:
        cleaned.close_and_delete()  # a poisoned batch or a full disk: no .cleaned leftovers
        raise
    counts.bytes_after += cleaned.size
    return cleaned


def _copy_retained(
    log_: PartitionLog,
    group: list[LogSegment],
    offsets: dict[bytes, int],
    counts: _Counts,
    now_ms: int,
    cleaned: LogSegment,
) -> None:
    pending = bytearray()
    infos: list[BatchInfo] = []
    retention_ms = log_.config.delete_retention_ms
    for segment in group:
        counts.bytes_before += segment.size
        delete_tombstones = now_ms - segment.largest_timestamp > retention_ms
        for pos, header in segment.iter_batches():
            raw = segment.read_at(pos, header.size)
            kept = (
                raw if header.is_control else _filter_batch(raw, offsets, delete_tombstones, counts)
            )
            if kept is None:
                continue
            kept_header = read_header(kept)
            infos.append(
                BatchInfo(
                    len(pending),
                    len(kept),
                    kept_header.base_offset,
                    kept_header.last_offset,
                    kept_header.max_timestamp,
                )
            )
            pending += kept
            if len(pending) >= _WRITE_CHUNK_BYTES:
                cleaned.append(pending, infos)
                pending, infos = bytearray(), []
    cleaned.append(pending, infos)
    cleaned.make_inactive()
    cleaned.flush()


def _filter_batch(
    raw: bytes, offsets: dict[bytes, int], delete_tombstones: bool, counts: _Counts
) -> bytes | None:
    """The batch with superseded records (and old tombstones) removed; None if none is left."""
    header, records = decode_batch(raw, verify_crc=False)
    kept: list[Record] = []
    for record in records:
        if record.key is not None:
            if offsets.get(record.key, -1) > record.offset:
                continue
            if record.value is None and delete_tombstones:
                continue
        kept.append(record)
    counts.records_removed += len(records) - len(kept)
    if len(kept) == len(records):
        return raw
    if not kept:
        return None
    return build_batch(
        kept,
        base_offset=header.base_offset,
        compression=Compression(header.compression),
        timestamp_type=header.timestamp_type,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        partition_leader_epoch=header.partition_leader_epoch,
        is_transactional=header.is_transactional,
        keep_offsets=True,
    )
