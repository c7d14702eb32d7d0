"""One partition's log: an ordered list of segments, the last one active.

Directory ``<log dir>/<topic>-<partition>/`` holds the segments
(``<base>.log``/``.index``/``.timeindex``, see :mod:`log_engine.storage.segment`)
and ``leader-epoch-checkpoint``. The log dir root holds the clean-shutdown
marker ``.kafka_cleanshutdown`` that decides whether opening recovers
(:mod:`log_engine.storage.recovery`).

Offsets: ``log_start_offset <= recovery_point <= log_end_offset`` is not
required (a log start may pass an unflushed offset), but each of these holds:
``log_start_offset <= log_end_offset``, ``recovery_point <= log_end_offset``,
segment base offsets strictly increase, and every stored batch's offsets are
below the next segment's base offset. Appends validate every batch before
writing any byte; reads return whole stored batches as file slices and never
decode records. Removed segments are renamed ``.deleted`` and unlinked only
after ``file.delete.delay.ms``, so slices already handed out stay readable.

A failed write (OSError: a short write then ENOSPC, EIO, a failed fsync or
roll) is undone before it is reported: the segment is cut back to its size
before the append, its indexes and stats restored, the log end offset kept;
then the log dir goes offline (:mod:`log_engine.storage.log_dir_state`) and
the append raises LogDirOfflineError (KAFKA_STORAGE_ERROR). Reads keep working.

Thread safety: one lock serializes appends, reads and every structural change.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from log_engine.errors import (
    InvalidRecordError,
    KafkaStorageError,
    LogDirOfflineError,
    OffsetOutOfRangeError,
)
from log_engine.invariants import check
from log_engine.records import BatchHeader
from log_engine.storage import append_path, retention
from log_engine.storage.append_path import validate_append
from log_engine.storage.checkpoints import fsync_directory
from log_engine.storage.config import LogConfig
from log_engine.storage.leader_epoch import LeaderEpochCache
from log_engine.storage.log_dir_state import LogDirState
from log_engine.storage.read_path import BatchCollector, find_offset_for_timestamp
from log_engine.storage.recovery import DELETED_SUFFIX, load_segments
from log_engine.storage.segment import AppendMark, LogSegment
from log_engine.storage.types import AppendInfo, BatchInfo, ReadResult

log = logging.getLogger(__name__)

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
_EMPTY_APPEND = AppendInfo(-1, -1, -1, -1, 0, 0)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class PartitionLog:
    """A partition's segmented log on disk: append, read, truncate, retain, recover.

    Build with :meth:`open`. The broker appends produce requests (leader) or
    fetched batches (follower, ``assign_offsets=False``) and serves fetches
    from :meth:`read`'s file slices.
    """

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        segments: list[LogSegment],
        *,
        log_start_offset: int,
        now_ms: Callable[[], int],
        dir_state: LogDirState | None = None,
    ) -> None:
        self._directory = directory
        self._dir_state = dir_state or LogDirState(directory.parent)
        self._config = config
        self._now_ms = now_ms
        self._lock = threading.RLock()
        self._segments = segments
        self._bases = [s.base_offset for s in segments]
        self._next_offset = segments[-1].next_offset
        self._log_start_offset = min(
            max(log_start_offset, segments[0].base_offset), self._next_offset
        )
        self._recovery_point = self._next_offset
        self._last_flush_ms = now_ms()
        self._directory_dirty = False
        self._pending_deletes: list[tuple[int, LogSegment]] = []
        self._closed = False
        self._truncations = 0
        self.cleaner_offset = self._log_start_offset
        """First offset the cleaner has not compacted yet (its checkpoint)."""
        self.leader_epochs = LeaderEpochCache.in_directory(directory, lambda: self._next_offset)
        self.leader_epochs.truncate_from_end(self._next_offset)
        self.leader_epochs.truncate_from_start(self._log_start_offset)

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        *,
        recovery_point: int = 0,
        log_start_offset: int = 0,
        now_ms: Callable[[], int] = wall_clock_ms,
        clean_shutdown: bool | None = None,
        dir_state: LogDirState | None = None,
    ) -> PartitionLog:
        """Open or create the log in ``directory``, recovering it after a crash.

        ``clean_shutdown`` defaults to whether ``.kafka_cleanshutdown`` exists
        in the parent (log dir root). Without it every segment from the one
        holding ``recovery_point`` is validated and cut at the first bad batch.
        """
        directory.mkdir(parents=True, exist_ok=True)
        if clean_shutdown is None:
            clean_shutdown = (directory.parent / CLEAN_SHUTDOWN_FILE).exists()
        segments = load_segments(
            directory,
            config,
            recovery_point=recovery_point,
            clean_shutdown=clean_shutdown,
            now_ms=now_ms(),
        )
        if not segments:
            segments = [
                LogSegment(
                    directory, log_start_offset, config, now_ms=now_ms(), fresh=True, active=True
                )
            ]
            fsync_directory(directory)
        elif not clean_shutdown:
            for segment in segments:
                if segment.next_offset > recovery_point:
                    segment.flush()
        return cls(
            directory,
            config,
            segments,
            log_start_offset=log_start_offset,
            now_ms=now_ms,
            dir_state=dir_state,
        )

    # -- properties ----------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def config(self) -> LogConfig:
        return self._config

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._next_offset

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def size_bytes(self) -> int:
        with self._lock:
            return sum(s.size for s in self._segments)

    @property
    def segments(self) -> Sequence[LogSegment]:
        """The live segments, oldest first (a read-only snapshot)."""
        with self._lock:
            return tuple(self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    def update_config(self, config: LogConfig) -> None:
        """Use ``config`` from now on (index sizes apply to the active and new segments)."""
        with self._lock:
            self._config = config
            self._segments[-1].make_active(config)

    # -- append --------------------------------------------------------------------------

    def append(
        self,
        data: bytes | bytearray | memoryview,
        *,
        leader_epoch: int = 0,
        assign_offsets: bool = True,
    ) -> AppendInfo:
        """Append the batches in ``data`` (back to back), all or nothing.

        Every batch is validated (magic, lengths, CRC-32C, size limit) before a
        byte is written. A leader (``assign_offsets``) stamps base offsets from
        the log end offset, ``leader_epoch`` and, for LogAppendTime topics, the
        append time. A follower's batches keep their offsets, which must not go
        below the log end offset (UnexpectedAppendOffsetError).
        """
        view = memoryview(data).cast("B")
        headers = validate_append(view, self._config, dense=assign_offsets)
        if not headers:
            return _EMPTY_APPEND
        with self._lock:
            self._check_open()
            if self._dir_state.offline:
                self._dir_state.check_online(f"append to {self._directory.name}")
            config = self._config
            append_time = self._now_ms() if config.log_append_time and assign_offsets else -1
            if assign_offsets:
                infos, parts = append_path.assign_offsets(
                    view, headers, self._next_offset, leader_epoch, append_time
                )
            else:
                infos = append_path.replica_offsets(
                    headers, self._next_offset, self._directory.name
                )
                parts = [view]
            try:
                segment = self._segment_for(len(view), infos[0].base_offset, infos[-1].last_offset)
            except OSError as exc:
                raise self._went_offline("rolling a new segment", exc) from exc
            mark, start, next_offset = segment.mark(), segment.size, self._next_offset
            try:
                if len(parts) == 1:
                    segment.write_at_end(parts[0])
                else:
                    segment.writev_at_end(parts, len(view))
                segment.index_appended(infos, start)
                self._next_offset = infos[-1].last_offset + 1
                self._update_epochs(headers, infos, leader_epoch if assign_offsets else None)
                if self._next_offset - self._recovery_point >= config.flush_messages:
                    self.flush()
            except OSError as exc:
                self._undo_append(segment, mark, next_offset)
                raise self._went_offline(f"writing {len(view)} bytes", exc) from exc
        return AppendInfo(
            first_offset=infos[0].base_offset,
            last_offset=infos[-1].last_offset,
            max_timestamp=max(info.max_timestamp for info in infos),
            log_append_time_ms=append_time,
            size_bytes=len(view),
            batch_count=len(infos),
        )

    def _undo_append(self, segment: LogSegment, mark: AppendMark, next_offset: int) -> None:
        """Put the log back as it was before a failed append (see the module doc)."""
        self._next_offset = next_offset
        try:
            segment.roll_back(mark)
        except OSError as exc:
            log.error(
                "%s: could not cut segment %d back to %d bytes (%s); recovery at the "
                "next start cuts the torn tail",
                self._directory.name,
                segment.base_offset,
                mark[0],
                exc,
            )
        with contextlib.suppress(OSError):  # right in memory; the next open fixes the file
            self.leader_epochs.truncate_from_end(next_offset)

    def _went_offline(self, action: str, exc: OSError) -> LogDirOfflineError:
        """Mark the log dir offline after a failed write; the error to raise."""
        reason = f"{self._directory.name}: {action} failed: {exc}"
        self._dir_state.mark_offline(reason)
        return LogDirOfflineError(f"{reason}; log dir {self._dir_state.log_dir} is now offline")

    @property
    def dir_state(self) -> LogDirState:
        """The online/offline state of the log dir holding this partition."""
        return self._dir_state

    def _segment_for(self, size: int, first_offset: int, last_offset: int) -> LogSegment:
        """The segment this append goes to, rolling first when Kafka's rules say so."""
        active = self._segments[-1]
        if active.should_roll(self._config, size, last_offset, self._now_ms()):
            active = self._roll_at(max(first_offset, self._next_offset))
        elif active.is_empty and not active.can_hold(last_offset):
            self._remove_segments([active])
            active = self._add_segment(first_offset)
        if not active.can_hold(last_offset):
            raise InvalidRecordError(
                f"append spans offsets {first_offset}..{last_offset}, more than one segment holds"
            )
        return active

    def _update_epochs(
        self, headers: list[tuple[int, BatchHeader]], infos: list[BatchInfo], epoch: int | None
    ) -> None:
        if epoch is not None:
            if epoch != self.leader_epochs.latest_epoch:
                self.leader_epochs.assign(epoch, infos[0].base_offset)
            return
        for (_, header), info in zip(headers, infos, strict=True):
            if header.partition_leader_epoch != self.leader_epochs.latest_epoch:
                self.leader_epochs.assign(header.partition_leader_epoch, info.base_offset)

    # -- read ----------------------------------------------------------------------------

    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> ReadResult:
        """Whole batches from the one holding ``offset``, within ``max_bytes``.

        Stops before any batch reaching ``max_offset`` (exclusive, the high
        watermark); returns at least one whole batch if ``min_one_batch`` even
        past ``max_bytes`` (KIP-74). ``offset == log_end_offset`` reads nothing;
        below the log start or past the end raises OffsetOutOfRangeError.
        """
        with self._lock:
            self._check_open()
            if offset < self._log_start_offset or offset > self._next_offset:
                raise OffsetOutOfRangeError(
                    f"{self._directory.name}: offset {offset} is outside "
                    f"[{self._log_start_offset}, {self._next_offset}]"
                )
            limit = self._next_offset if max_offset is None else min(max_offset, self._next_offset)
            reader = BatchCollector(offset, max_bytes, limit, min_one_batch)
            first = max(0, bisect.bisect_right(self._bases, offset) - 1)
            for i in range(first, len(self._segments)):
                if reader.done:
                    break
                reader.collect(self._segments[i])
            return reader.result()

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the first record with timestamp >= ``timestamp_ms``.

        Finds the batch through the time index, the offset index and batch
        headers, then decodes that one batch for the exact record (as Kafka's
        ListOffsets does). None when no record is that new.
        """
        with self._lock:
            self._check_open()
            return find_offset_for_timestamp(self._segments, timestamp_ms, self._log_start_offset)

    # -- truncation and deletion ---------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Drop every batch holding offsets >= ``offset`` (a follower diverged)."""
        with self._lock:
            self._check_open()
            if offset >= self._next_offset:
                return
            if offset < self._log_start_offset:
                self.truncate_fully_and_start_at(offset)
                return
            index = bisect.bisect_right(self._bases, offset) - 1
            self._remove_segments(self._segments[index + 1 :])
            segment = self._segments[-1]
            found = segment.find_batch(offset)
            new_end = offset if found is None else min(offset, found[1].base_offset)
            segment.truncate_to(offset)
            segment.make_active(self._config)
            self._next_offset = new_end
            self._truncations += 1
            self._recovery_point = min(self._recovery_point, new_end)
            self.cleaner_offset = min(self.cleaner_offset, new_end)
            self.leader_epochs.truncate_from_end(new_end)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and restart the empty log at ``offset``."""
        with self._lock:
            self._check_open()
            old = list(self._segments)
            self._remove_segments(old)
            self._add_segment(offset)
            self._next_offset = self._log_start_offset = self._recovery_point = offset
            self._truncations += 1
            self.cleaner_offset = offset
            self.leader_epochs.clear()

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset up to ``offset`` (DeleteRecords); return it.

        Whole segments below it are deleted; the rest becomes unreadable.
        """
        with self._lock:
            self._check_open()
            self._dir_state.check_online(f"delete records of {self._directory.name}")
            if offset > self._next_offset:
                raise OffsetOutOfRangeError(
                    f"cannot delete records before {offset}: log end is {self._next_offset}"
                )
            if offset > self._log_start_offset:
                self._log_start_offset = offset
                self.cleaner_offset = max(self.cleaner_offset, offset)
                self.leader_epochs.truncate_from_start(offset)
                count = retention.below_log_start(self._segments, offset)
                self._remove_segments(self._segments[:count])
            return self._log_start_offset

    def apply_retention(self, now_ms: int) -> int:
        """Delete old closed segments per retention.ms / retention.bytes; return how many."""
        with self._lock:
            self._check_open()
            count = retention.segments_to_delete(
                self._segments, self._config, now_ms, self._log_start_offset
            )
            if count:
                self._remove_segments(self._segments[:count])
                self._log_start_offset = max(self._log_start_offset, self._segments[0].base_offset)
                self.cleaner_offset = max(self.cleaner_offset, self._log_start_offset)
                self.leader_epochs.truncate_from_start(self._log_start_offset)
            return count

    def remove_deleted_segments(self, now_ms: int | None = None) -> int:
        """Close and unlink ``.deleted`` segments older than file.delete.delay.ms."""
        now = self._now_ms() if now_ms is None else now_ms
        with self._lock:
            due = [s for deadline, s in self._pending_deletes if deadline <= now]
            self._pending_deletes = [(d, s) for d, s in self._pending_deletes if d > now]
        for segment in due:
            segment.close_and_delete()
        return len(due)

    # -- segments ------------------------------------------------------------------------

    def roll(self) -> LogSegment:
        """Start a new active segment at the log end (no-op if the active one is empty)."""
        with self._lock:
            self._check_open()
            self._dir_state.check_online(f"roll {self._directory.name}")
            if self._segments[-1].is_empty:
                return self._segments[-1]
            return self._roll_at(self._next_offset)

    def _roll_at(self, base_offset: int) -> LogSegment:
        self._segments[-1].make_inactive()
        return self._add_segment(base_offset)

    def _add_segment(self, base_offset: int) -> LogSegment:
        check(
            not self._bases or base_offset > self._bases[-1],
            f"new segment {base_offset} does not follow {self._bases[-1:]}",
        )
        segment = LogSegment(
            self._directory,
            base_offset,
            self._config,
            now_ms=self._now_ms(),
            fresh=True,
            active=True,
        )
        self._segments.append(segment)
        self._bases.append(base_offset)
        self._directory_dirty = True
        return segment

    def _remove_segments(self, doomed: Sequence[LogSegment]) -> None:
        """Take segments out of the log; their files go ``.deleted`` until the delay passes."""
        doomed_ids = {id(s) for s in doomed}
        self._segments = [s for s in self._segments if id(s) not in doomed_ids]
        self._bases = [s.base_offset for s in self._segments]
        deadline = self._now_ms() + self._config.file_delete_delay_ms
        for segment in doomed:
            segment.rename(DELETED_SUFFIX)
            self._pending_deletes.append((deadline, segment))

    @property
    def truncation_count(self) -> int:
        """How many times the log was truncated (the cleaner aborts a swap if it moved)."""
        return self._truncations

    def replace_segments(
        self,
        old: Sequence[LogSegment],
        new: LogSegment,
        *,
        truncation_count: int,
        after_step: Callable[[str], None] = lambda step: None,
    ) -> bool:
        """Swap cleaned segment ``new`` (``.cleaned`` files) in for ``old``, crash-safely.

        Steps (Kafka's): rename ``new`` to ``.swap``; rename ``old`` to
        ``.deleted``; rename ``new`` to its final name. Recovery completes a
        swap that a crash interrupted. Returns False (and deletes ``new``) if
        ``old`` is no longer a run of closed segments or the log was truncated
        since ``truncation_count`` was read.
        """
        with self._lock:
            self._check_open()
            start = next((i for i, s in enumerate(self._segments) if s is old[0]), -1)
            run = self._segments[start : start + len(old)]
            if (
                start < 0
                or truncation_count != self._truncations
                or len(run) != len(old)
                or any(a is not b for a, b in zip(run, old, strict=True))
                or start + len(old) >= len(self._segments)
            ):
                new.close_and_delete()
                return False
            new.rename(".swap")
            fsync_directory(self._directory)
            after_step("swap")
            self._remove_segments(old)
            after_step("deleted")
            new.rename("")
            fsync_directory(self._directory)
            self._segments.insert(start, new)
            self._bases.insert(start, new.base_offset)
            after_step("done")
            return True

    # -- durability and lifecycle --------------------------------------------------------

    def flush(self, up_to: int | None = None) -> None:
        """fsync segments up to offset ``up_to`` (default: the log end); move the recovery point."""
        with self._lock:
            self._check_open()
            target = self._next_offset if up_to is None else min(up_to, self._next_offset)
            if target <= self._recovery_point:
                return
            dirty = [
                s
                for s in self._segments
                if s.next_offset > self._recovery_point and s.base_offset < target
            ]
            if not dirty:
                dirty = [self._segments[-1]]
            for segment in dirty:
                segment.flush()
            if self._directory_dirty:
                fsync_directory(self._directory)
                self._directory_dirty = False
            self._recovery_point = max(self._recovery_point, target)
            self._last_flush_ms = self._now_ms()

    def maybe_flush(self, now_ms: int) -> bool:
        """Flush if unflushed data is older than flush.ms; return whether it flushed."""
        with self._lock:
            if self._closed or self._next_offset <= self._recovery_point:
                self._last_flush_ms = now_ms
                return False
            if now_ms - self._last_flush_ms < self._config.flush_ms:
                return False
            try:
                self.flush()
            except OSError as exc:
                raise self._went_offline("a timed flush", exc) from exc
            self._last_flush_ms = now_ms
            return True

    def close(self) -> None:
        """Flush, trim the indexes and close every file (the log cannot be used after).

        In an offline log dir the files are closed as they are (no flush, no
        trim): the next start recovers them.
        """
        with self._lock:
            if self._closed:
                return
            if not self._dir_state.offline:
                try:
                    self.flush()
                    for segment in self._segments:
                        segment.close()
                except OSError as exc:
                    self._went_offline("closing the log", exc)
            for segment in self._segments:
                segment.abandon()
            for _, segment in self._pending_deletes:
                segment.close_and_delete()
            self._pending_deletes = []
            self._closed = True

    def delete(self) -> None:
        """Close without flushing and remove the whole partition directory."""
        with self._lock:
            if not self._closed:
                for segment in self._segments:
                    segment.close()
                for _, segment in self._pending_deletes:
                    segment.close_and_delete()
                self._closed = True
            shutil.rmtree(self._directory, ignore_errors=True)

    def _check_open(self) -> None:
        if self._closed:
            raise KafkaStorageError(f"{self._directory}: the log is closed")
