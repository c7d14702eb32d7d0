"""The partitions of one log directory, their configs, checkpoints and maintenance.

Files at the log dir root::

    .lock                              fcntl.flock'ed while a LogManager owns the dir
    .kafka_cleanshutdown               written by close(); absent -> open() recovers
    recovery-point-offset-checkpoint   <topic> <partition> <offset>  (checkpoint format)
    log-start-offset-checkpoint        <topic> <partition> <offset>
    cleaner-offset-checkpoint          <topic> <partition> <offset>  (first uncompacted)
    topic-configs.json                 {"<topic>": {"<kafka config key>": "<value>"}}
    <topic>-<partition>/               one PartitionLog each (topic names may hold '-':
                                       the partition is after the LAST '-')

``topic-configs.json`` (our choice; Kafka keeps topic configs in its metadata
log) holds each topic's overrides as the strings the user gave, written
atomically; a topic's config is the default config with its overrides.

A failed write anywhere under the directory takes it offline for writes
(:mod:`log_engine.storage.log_dir_state`): maintenance and checkpoints stop
there and :meth:`LogManager.close` leaves no clean-shutdown marker, so the
next start recovers it.

Invariants: at most one LogManager (in any process) owns a directory; the
clean-shutdown marker exists only while no LogManager has it open.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from log_engine.errors import (
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    LogDirLockedError,
    LogDirOfflineError,
)
from log_engine.storage import cleaner
from log_engine.storage.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    fsync_directory,
    read_offsets,
    write_atomically,
    write_offsets,
)
from log_engine.storage.config import LogConfig
from log_engine.storage.log_dir_state import LogDirState
from log_engine.storage.partition_log import CLEAN_SHUTDOWN_FILE, PartitionLog, wall_clock_ms
from log_engine.storage.uncleanable import UncleanablePartitions

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"
TOPIC_CONFIG_FILE = "topic-configs.json"
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class MaintenanceResult:
    """What one :meth:`LogManager.run_maintenance` call did."""

    logs_flushed: int
    segments_deleted: int
    logs_compacted: int
    files_removed: int


def validate_topic_partition(topic: str, partition: int) -> None:
    """Kafka's topic name rule (1-249 of [a-zA-Z0-9._-], not '.' or '..'); partition >= 0."""
    if topic in (".", "..") or not _LEGAL_TOPIC.match(topic):
        raise InvalidTopicError(f"illegal topic name {topic!r}")
    if partition < 0:
        raise InvalidTopicError(f"partition {partition} of {topic!r} is negative")


class LogManager:
    """Owns one log directory: opens, creates and deletes partition logs and maintains them."""

    def __init__(
        self,
        log_dir: Path,
        default_config: LogConfig,
        lock_fd: int,
        overrides: dict[str, dict[str, str]],
        now_ms: Callable[[], int],
    ) -> None:
        self._log_dir = log_dir
        self._default_config = default_config
        self._lock_fd = lock_fd
        self._overrides = overrides
        self._now_ms = now_ms
        self._logs: dict[TopicPartition, PartitionLog] = {}
        self._lock = threading.RLock()
        self._closed = False
        self.state = LogDirState(log_dir)
        """Online, or offline for writes after a failed write."""
        self.uncleanable = UncleanablePartitions()
        """Compacted partitions whose cleaning failed, retried with backoff."""

    @classmethod
    def open(
        cls, log_dir: Path, default_config: LogConfig, *, now_ms: Callable[[], int] = wall_clock_ms
    ) -> LogManager:
        """Lock ``log_dir`` (LogDirLockedError if taken) and open every partition in it."""
        log_dir.mkdir(parents=True, exist_ok=True)
        lock_fd = _lock(log_dir)
        try:
            manager = cls(log_dir, default_config, lock_fd, _read_overrides(log_dir), now_ms)
            manager._load()
        except BaseException:
            os.close(lock_fd)
            raise
        return manager

    def _load(self) -> None:
        marker = self._log_dir / CLEAN_SHUTDOWN_FILE
        clean = marker.exists()
        recovery_points = read_offsets(self._log_dir / RECOVERY_POINT_CHECKPOINT)
        log_starts = read_offsets(self._log_dir / LOG_START_OFFSET_CHECKPOINT)
        cleaner_offsets = read_offsets(self._log_dir / CLEANER_OFFSET_CHECKPOINT)
        for path in sorted(self._log_dir.iterdir()):
            parsed = _parse_partition_dir(path)
            if parsed is None:
                continue
            topic, partition = parsed
            log_ = PartitionLog.open(
                path,
                self.topic_config(topic),
                recovery_point=recovery_points.get(parsed, 0),
                log_start_offset=log_starts.get(parsed, 0),
                now_ms=self._now_ms,
                clean_shutdown=clean,
                dir_state=self.state,
            )
            log_.cleaner_offset = max(log_.cleaner_offset, cleaner_offsets.get(parsed, 0))
            self._logs[(topic, partition)] = log_
        if clean:
            marker.unlink()
            fsync_directory(self._log_dir)
        log.info("%s: opened %d partition log(s), clean=%s", self._log_dir, len(self._logs), clean)

    @property
    def log_dir(self) -> Path:
        return self._log_dir

    @property
    def default_config(self) -> LogConfig:
        return self._default_config

    def default_config_properties(self) -> dict[str, str]:
        """The default topic config as Kafka-named strings."""
        return self._default_config.to_properties()

    # -- partitions ----------------------------------------------------------------------

    def get_or_create(
        self, topic: str, partition: int, overrides: dict[str, str] | None = None
    ) -> PartitionLog:
        """The partition's log, created if needed; ``overrides`` replace the topic's overrides."""
        validate_topic_partition(topic, partition)
        with self._lock:
            self._check_open()
            if overrides is not None:
                self.set_topic_overrides(topic, overrides)
            existing = self._logs.get((topic, partition))
            if existing is not None:
                return existing
            self.state.check_online(f"create {topic}-{partition}")
            directory = self._log_dir / f"{topic}-{partition}"
            try:
                log_ = PartitionLog.open(
                    directory,
                    self.topic_config(topic),
                    now_ms=self._now_ms,
                    clean_shutdown=True,
                    dir_state=self.state,
                )
                fsync_directory(self._log_dir)
            except OSError as exc:
                raise KafkaStorageError(f"cannot create {directory}: {exc}") from exc
            self._logs[(topic, partition)] = log_
            return log_

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        with self._lock:
            return self._logs.get((topic, partition))

    def partitions(self) -> dict[TopicPartition, PartitionLog]:
        """A snapshot of every open partition log."""
        with self._lock:
            return dict(self._logs)

    def delete_partition(self, topic: str, partition: int) -> None:
        """Close the partition's log and remove its directory (no-op if absent)."""
        with self._lock:
            log_ = self._logs.pop((topic, partition), None)
        self.uncleanable.forget((topic, partition))
        if log_ is not None:
            log_.delete()
            fsync_directory(self._log_dir)

    # -- configs -------------------------------------------------------------------------

    def topic_overrides(self, topic: str) -> dict[str, str]:
        with self._lock:
            return dict(self._overrides.get(topic, {}))

    def topic_config(self, topic: str) -> LogConfig:
        """The default config with ``topic``'s overrides applied."""
        with self._lock:
            return self._default_config.with_overrides(self._overrides.get(topic, {}))

    def set_topic_overrides(self, topic: str, overrides: dict[str, str]) -> None:
        """Replace ``topic``'s overrides (validated, persisted, applied to open partitions)."""
        config = self._default_config.with_overrides(overrides)
        with self._lock:
            self._check_open()
            previous = dict(self._overrides)
            if overrides:
                self._overrides[topic] = dict(overrides)
            else:
                self._overrides.pop(topic, None)
            try:
                write_atomically(
                    self._log_dir / TOPIC_CONFIG_FILE,
                    json.dumps(self._overrides, indent=2, sort_keys=True),
                )
            except OSError as exc:
                self._overrides = previous
                message = f"cannot save the config of topic {topic!r}: {exc}"
                raise KafkaStorageError(message) from exc
            for (name, _), log_ in self._logs.items():
                if name == topic:
                    log_.update_config(config)

    # -- durability and maintenance ------------------------------------------------------

    def checkpoint(self) -> None:
        """Write the recovery-point, log-start and cleaner offset checkpoints."""
        with self._lock:
            logs = dict(self._logs)
        write_offsets(
            self._log_dir / RECOVERY_POINT_CHECKPOINT,
            {tp: lg.recovery_point for tp, lg in logs.items()},
        )
        write_offsets(
            self._log_dir / LOG_START_OFFSET_CHECKPOINT,
            {tp: lg.log_start_offset for tp, lg in logs.items()},
        )
        write_offsets(
            self._log_dir / CLEANER_OFFSET_CHECKPOINT,
            {tp: lg.cleaner_offset for tp, lg in logs.items()},
        )

    def run_maintenance(self, now_ms: int | None = None) -> MaintenanceResult:
        """Timed flushes, retention, compaction and delayed file deletion, then checkpoints.

        Meant to be called every few seconds (from a thread: compaction may take
        a while). Each partition, and each step, is isolated: an error is
        logged and the others carry on. A compaction that fails with any
        exception marks its partition uncleanable for a backoff
        (:mod:`log_engine.storage.uncleanable`). A failed write (a flush, the
        checkpoints) takes the directory offline, which ends maintenance here.
        """
        now = self._now_ms() if now_ms is None else now_ms
        flushed = deleted = compacted = removed = 0
        for tp, log_ in self.partitions().items():
            if self.state.offline:
                break
            try:
                flushed += log_.maybe_flush(now)
                deleted += log_.apply_retention(now)
            except (KafkaError, OSError):
                log.exception("maintenance of %s-%d failed", *tp)
            if log_.config.compact and self.uncleanable.due(tp, now) and not self.state.offline:
                compacted += self._compact(tp, log_, now)
            try:
                removed += log_.remove_deleted_segments(now)
            except OSError:
                log.exception("removing deleted segments of %s-%d failed", *tp)
        if not self.state.offline:
            try:
                self.checkpoint()
            except OSError as exc:
                self.state.mark_offline(f"writing the checkpoint files failed: {exc}")
        return MaintenanceResult(flushed, deleted, compacted, removed)

    def _compact(self, tp: TopicPartition, log_: PartitionLog, now_ms: int) -> int:
        """One cleaner pass over ``log_``; 1 if it compacted, 0 if not or if it failed."""
        try:
            result = cleaner.clean(log_, now_ms)
        except LogDirOfflineError:
            return 0
        except Exception as exc:  # records from disk: any decode error is the data's, not ours
            self.uncleanable.failed(tp, now_ms, exc)
            return 0
        self.uncleanable.succeeded(tp)
        return 0 if result is None else 1

    def close(self) -> None:
        """Close every log, write checkpoints and the clean-shutdown marker, release the lock."""
        with self._lock:
            if self._closed:
                return
            for log_ in self._logs.values():
                log_.close()
            if self.state.offline:
                log.warning(
                    "%s closed OFFLINE (%s): no clean-shutdown marker, the next start "
                    "recovers it",
                    self._log_dir,
                    self.state.offline_reason,
                )
            else:
                try:
                    self.checkpoint()
                    write_atomically(self._log_dir / CLEAN_SHUTDOWN_FILE, "")
                except OSError:
                    log.exception("%s: checkpoints at close failed", self._log_dir)
            os.close(self._lock_fd)
            self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise KafkaStorageError(f"{self._log_dir}: the log manager is closed")


def _lock(log_dir: Path) -> int:
    fd = os.open(log_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LogDirLockedError(f"{log_dir} is in use by another process") from None
    return fd


def _read_overrides(log_dir: Path) -> dict[str, dict[str, str]]:
    path = log_dir / TOPIC_CONFIG_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise KafkaStorageError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise KafkaStorageError(f"{path}: expected {{topic: {{key: value}}}}")
    return {str(t): {str(k): str(v) for k, v in o.items()} for t, o in data.items()}


CLUSTER_METADATA_TOPIC = "__cluster_metadata"
"""KRaft's metadata log lives in ``<log.dir>/__cluster_metadata-0`` in its own format."""


def _parse_partition_dir(path: Path) -> TopicPartition | None:
    if not path.is_dir():
        return None
    match = _PARTITION_DIR.match(path.name)
    if match is not None and match.group(1) == CLUSTER_METADATA_TOPIC:
        return None  # the controller quorum's Raft log (log_engine.replication.quorum)
    if match is None or match.group(1) in (".", "..") or not _LEGAL_TOPIC.match(match.group(1)):
        log.warning("%s: not a <topic>-<partition> directory, ignored", path)
        return None
    return match.group(1), int(match.group(2))
