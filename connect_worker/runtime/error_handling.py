"""What happens when one record cannot be transformed or converted.

Each exception type has one behaviour (see ``connectors.api.errors``):

- ``RetriableError`` in a stage: the record is processed again after a backoff
  until ``errors.retry.timeout`` runs out (0: no retry; -1: forever); after
  that it counts as a bad record;
- ``DataError`` (a bad record): ``errors.tolerance=none`` fails the task,
  ``all`` skips the record and hands it to the :class:`ErrorReporter` s: the
  dead-letter queue (:mod:`.dead_letter`) and the log (``errors.log.enable``;
  a record neither dead-lettered nor logged by request is logged anyway, so it
  never disappears without a trace);
- anything else: a bug or an outage; the task fails with the trace.

The runners call :meth:`ErrorHandler.recover` only after a stage raised, so
the per-record path pays nothing for error handling.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from connect_worker.connector_config import CommonConnectorConfig
from connect_worker.runtime.backoff import ExponentialBackoff
from connect_worker.runtime.status import TaskId
from connectors.api import ConnectError, DataError, RetriableError

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import ErrorMetrics

log = logging.getLogger(__name__)
T = TypeVar("T")
_RETRY_INITIAL_MS = 300


class Stage(StrEnum):
    """Where in the data path a record failed (Kafka's stage names)."""

    TASK_POLL = "TASK_POLL"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"
    TASK_PUT = "TASK_PUT"


class StageError(ConnectError):
    """A stage raised; carries the stage and the original exception as ``__cause__``."""

    def __init__(self, stage: Stage, cause: BaseException) -> None:
        super().__init__(f"{stage}: {type(cause).__name__}: {cause}")
        self.stage = stage
        self.cause = cause


class ToleranceExceededError(ConnectError):
    """A bad record met ``errors.tolerance=none`` (Kafka's "Tolerance exceeded").

    ``record_position`` says where the record came from (a sink's record: its
    topic, partition and offset; a source record: its topic), or None.
    """

    record_position: RecordPosition | None = None


@dataclass(frozen=True, slots=True)
class RecordPosition:
    """Where a failing record is: ``str()`` is the short ``topic-partition@offset``."""

    topic: str
    partition: int | None = None
    offset: int | None = None

    def __str__(self) -> str:
        position = self.topic if self.partition is None else f"{self.topic}-{self.partition}"
        return position if self.offset is None else f"{position}@{self.offset}"

    def spelled_out(self) -> str:
        """``topic t, partition 0, offset 7``: the parts named, for a log line read once."""
        parts = [f"topic {self.topic}"]
        if self.partition is not None:
            parts.append(f"partition {self.partition}")
        if self.offset is not None:
            parts.append(f"offset {self.offset}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class ErrorSettings:
    """The connector's ``errors.*`` keys that govern record-level failures."""

    tolerance_all: bool = False
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    log_enable: bool = False
    log_include_messages: bool = False

    @classmethod
    def from_config(cls, config: CommonConnectorConfig) -> ErrorSettings:
        """The ``errors.*`` keys of the connector's validated config."""
        return cls(
            tolerance_all=config.errors_tolerance == "all",
            retry_timeout_ms=config.errors_retry_timeout,
            retry_delay_max_ms=config.errors_retry_delay_max_ms,
            log_enable=config.errors_log_enable,
            log_include_messages=config.errors_log_include_messages,
        )


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """One skipped record: where it failed and why (what a DLQ reporter writes)."""

    task: TaskId
    stage: Stage
    record: Any  # the original record: a SourceRecord, or a ConsumerRecord for sinks
    error: BaseException


class ErrorReporter(Protocol):
    """Receives each tolerated bad record (log, dead-letter queue)."""

    def report(self, context: ErrorContext) -> None: ...


class LogReporter:
    """``errors.log.enable``: one WARNING per bad record, with it if asked."""

    def __init__(self, include_messages: bool, metrics: ErrorMetrics | None = None) -> None:
        self._include_messages = include_messages
        self._metrics = metrics

    def report(self, context: ErrorContext) -> None:
        if self._metrics is not None:
            self._metrics.total_errors_logged += 1
        detail = f" record={context.record!r}" if self._include_messages else ""
        log.warning(
            "task %s skipped a record that failed in %s: %s: %s%s",
            context.task,
            context.stage,
            type(context.error).__name__,
            context.error,
            detail,
        )


class ErrorHandler:
    """Applies :class:`ErrorSettings` to failures of one task's record stages.

    ``stopping`` lets a retry sleep end early when the task is asked to stop;
    ``metrics`` counts failures, retries, errors and skips (Kafka's
    ``task-error-metrics``): every failed attempt is a failure, a retry after
    one a retry, a record given up on an error, an error tolerated a skip.
    """

    def __init__(
        self,
        task: TaskId,
        settings: ErrorSettings,
        reporters: Sequence[ErrorReporter] = (),
        *,
        stopping: threading.Event | None = None,
        metrics: ErrorMetrics | None = None,
    ) -> None:
        self.task = task
        self.metrics = metrics
        self.settings = settings
        self._reporters = list(reporters)
        if settings.log_enable or not self._reporters:
            # Without errors.log.enable and a dead-letter queue a skipped record would
            # vanish without a trace: it is logged anyway (its content only if asked).
            self._reporters.append(LogReporter(settings.log_include_messages, metrics))
        self._stopping = stopping or threading.Event()
        self.skipped = 0

    def add_reporter(self, reporter: ErrorReporter) -> None:
        """One more reporter (e.g. a test's)."""
        self._reporters.append(reporter)

    def close(self) -> None:
        """Close the reporters that hold resources (the dead-letter queue's producer)."""
        for reporter in self._reporters:
            close = getattr(reporter, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    log.exception("task %s: closing an error reporter failed", self.task)

    def recover(self, process: Callable[[Any], T], record: Any, error: BaseException) -> T | None:
        """After ``process(record)`` raised ``error``: retry, tolerate (None) or raise."""
        metrics = self.metrics
        if metrics is not None:
            metrics.total_record_failures += 1
        deadline = self._retry_deadline()
        backoff = ExponentialBackoff(
            min(_RETRY_INITIAL_MS, self.settings.retry_delay_max_ms),
            self.settings.retry_delay_max_ms,
        )
        while _is_retriable(error) and time.monotonic() < deadline:
            delay = min(backoff.next_delay_s(), max(0.0, deadline - time.monotonic()))
            if self._stopping.wait(delay):
                break
            if metrics is not None:
                metrics.total_retries += 1
            try:
                return process(record)
            except Exception as exc:
                error = exc
                if metrics is not None:
                    metrics.total_record_failures += 1
        stage, cause = _unwrap(error)
        if not isinstance(cause, DataError | RetriableError):
            raise error
        self._tolerate(stage, record, cause)
        return None

    def tolerate(self, stage: Stage, record: Any, cause: BaseException) -> None:
        """Skip a bad record under ``errors.tolerance=all``; raise under ``none``."""
        if self.metrics is not None:
            self.metrics.total_record_failures += 1
        self._tolerate(stage, record, cause)

    def _tolerate(self, stage: Stage, record: Any, cause: BaseException) -> None:
        if self.metrics is not None:
            self.metrics.record_error()
        if not self.settings.tolerance_all:
            error = ToleranceExceededError(
                f"Tolerance exceeded in error handler: {stage} failed: "
                f"{type(cause).__name__}: {cause}"
            )
            error.record_position = _record_position(record)
            raise error from cause
        self.skipped += 1
        if self.metrics is not None:
            self.metrics.total_records_skipped += 1
        context = ErrorContext(self.task, stage, record, cause)
        for reporter in self._reporters:
            reporter.report(context)

    def _retry_deadline(self) -> float:
        timeout_ms = self.settings.retry_timeout_ms
        if timeout_ms < 0:
            return float("inf")
        return time.monotonic() + timeout_ms / 1000


def _record_position(record: Any) -> RecordPosition | None:
    """Where a record came from, as far as it says."""
    topic = getattr(record, "topic", None)
    if not isinstance(topic, str):
        return None
    partition = getattr(record, "partition", None)
    if partition is None:
        partition = getattr(record, "kafka_partition", None)
    offset = getattr(record, "offset", None)
    if offset is None:
        offset = getattr(record, "kafka_offset", None)
    return RecordPosition(
        topic,
        partition if isinstance(partition, int) else None,
        offset if isinstance(offset, int) else None,
    )


def _unwrap(error: BaseException) -> tuple[Stage, BaseException]:
    if isinstance(error, StageError):
        return error.stage, error.cause
    return Stage.TRANSFORMATION, error


def _is_retriable(error: BaseException) -> bool:
    _, cause = _unwrap(error)
    return isinstance(cause, RetriableError)
