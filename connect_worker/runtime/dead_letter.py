"""The dead-letter queue: bad records go to a topic instead of disappearing.

``errors.deadletterqueue.topic.name`` turns it on (with ``errors.tolerance=all``);
:class:`DeadLetterQueueReporter` is then one of the task's
:class:`~connect_worker.runtime.error_handling.ErrorReporter` s. What it writes:

- sinks (Kafka Connect): a record that failed a converter or a transform, as
  read from the log: the original key, value and headers, byte for byte. A
  record ``put`` refused with ``DataError`` is written back through the
  connector's converters (as Kafka's errant record reporter does);
- sources (beyond Kafka Connect): a record that failed a transform or a
  converter, the connector's original record through the converters (a record
  the converters cannot write has its key, value and headers written as JSON text).

With ``errors.deadletterqueue.context.headers.enable=true`` Kafka's
``__connect.errors.*`` headers describe the failure (all UTF-8 strings):
``topic``, ``partition``, ``offset`` (sinks: where the record was read),
``connector.name``, ``task.id``, ``stage``, ``class.name`` (the transform,
converter or task class that failed), ``exception.class.name``,
``exception.message``, ``exception.stacktrace``; for sources also
``source.partition`` and ``source.offset`` (JSON).

The topic is created on first use (one partition, the configured replication
factor; -1: the broker's default). Each write waits for its acknowledgement
before the runner goes on, so a source offset or sink offset past the bad
record is never committed before the record is in the queue; a write that
fails raises :class:`DeadLetterQueueError` and fails the task (the record is
then read or polled again after the restart, never lost).
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from connect_worker.connector_config import CommonConnectorConfig
from connect_worker.runtime.conversion import LogHeaders, RecordConverters
from connect_worker.runtime.error_handling import ErrorContext, Stage
from connectors.api import ConnectError, Converter, HeaderConverter, SinkTask, SourceTask
from connectors.api.records import ConnectRecord, SourceRecord
from log_engine.client import ConsumerRecord, SyncProducer
from transforms.api import Predicate, Transformation

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import ErrorMetrics

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
#: Kafka's context header names, in the order they are written.
CONTEXT_HEADERS = tuple(
    HEADER_PREFIX + name
    for name in (
        "topic", "partition", "offset", "connector.name", "task.id", "stage", "class.name",
        "exception.class.name", "exception.message", "exception.stacktrace",
    )
)
SOURCE_PARTITION_HEADER = HEADER_PREFIX + "source.partition"
SOURCE_OFFSET_HEADER = HEADER_PREFIX + "source.offset"
DEFAULT_DELIVERY_TIMEOUT_S = 30.0

#: Which plugin classes can be "the class that failed" in each stage.
_STAGE_CLASSES: dict[Stage, tuple[type, ...]] = {
    Stage.TRANSFORMATION: (Transformation, Predicate),
    Stage.KEY_CONVERTER: (Converter,),
    Stage.VALUE_CONVERTER: (Converter,),
    Stage.HEADER_CONVERTER: (HeaderConverter,),
    Stage.TASK_PUT: (SinkTask,),
    Stage.TASK_POLL: (SourceTask,),
}


class DeadLetterQueueError(ConnectError):
    """A bad record could not be written to the dead-letter topic: the task fails."""


@dataclass(frozen=True, slots=True)
class DeadLetterSettings:
    """The connector's ``errors.deadletterqueue.*`` keys."""

    topic: str
    replication_factor: int = -1
    context_headers: bool = False
    delivery_timeout_s: float = DEFAULT_DELIVERY_TIMEOUT_S

    @classmethod
    def from_config(cls, config: CommonConnectorConfig) -> DeadLetterSettings | None:
        """The settings from the connector's validated config; None without a topic."""
        topic = config.errors_deadletterqueue_topic_name.strip()
        if not topic:
            return None
        return cls(
            topic,
            config.errors_deadletterqueue_topic_replication_factor,
            config.errors_deadletterqueue_context_headers_enable,
        )

    def topic_props(self) -> dict[str, str]:
        """How :class:`~.topics.TopicCreator` creates the topic."""
        return {
            "topic.creation.default.partitions": "1",
            "topic.creation.default.replication.factor": str(self.replication_factor),
        }


def failure_description(context: ErrorContext) -> dict[str, str]:
    """The ``__connect.errors.*`` values describing one failure (header name -> text)."""
    record, error = context.record, context.error
    described: dict[str, str] = {}
    topic = getattr(record, "topic", None)
    if topic is not None:
        described[HEADER_PREFIX + "topic"] = str(topic)
    partition = getattr(record, "partition", None)
    if partition is not None:
        described[HEADER_PREFIX + "partition"] = str(partition)
    offset = _record_offset(record)
    if offset is not None:
        described[HEADER_PREFIX + "offset"] = str(offset)
    described[HEADER_PREFIX + "connector.name"] = context.task.connector
    described[HEADER_PREFIX + "task.id"] = str(context.task.task)
    described[HEADER_PREFIX + "stage"] = str(context.stage)
    described[HEADER_PREFIX + "class.name"] = failing_class(context.stage, error)
    described[HEADER_PREFIX + "exception.class.name"] = _qualified(type(error))
    described[HEADER_PREFIX + "exception.message"] = str(error)
    described[HEADER_PREFIX + "exception.stacktrace"] = "".join(
        traceback.format_exception(error)
    )
    if isinstance(record, SourceRecord):
        described[SOURCE_PARTITION_HEADER] = _json(record.source_partition)
        described[SOURCE_OFFSET_HEADER] = _json(record.source_offset)
    return described


def failing_class(stage: Stage, error: BaseException) -> str:
    """The plugin class that raised ``error`` in ``stage`` (from the traceback; else '')."""
    wanted = _STAGE_CLASSES.get(stage, ())
    found = ""
    tb = error.__traceback__
    while tb is not None:  # outermost to innermost: keep the innermost match
        owner = tb.tb_frame.f_locals.get("self")
        if wanted and isinstance(owner, wanted):
            found = _qualified(type(owner))
        tb = tb.tb_next
    return found


class DeadLetterQueueReporter:
    """Writes each tolerated bad record to the dead-letter topic (see the module doc).

    Lifecycle: built per task attempt (nothing connects until the first bad
    record) -> :meth:`report` from the task thread -> :meth:`close`.
    """

    def __init__(
        self,
        settings: DeadLetterSettings,
        *,
        producer_factory: Callable[[], SyncProducer],
        ensure_topic: Callable[[str, Mapping[str, str]], None],
        converters: RecordConverters | None = None,
        metrics: ErrorMetrics | None = None,
    ) -> None:
        self.settings = settings
        self._metrics = metrics
        self._producer_factory = producer_factory
        self._ensure_topic = ensure_topic
        self._converters = converters
        self._producer: SyncProducer | None = None
        self._lock = threading.Lock()
        self.written = 0

    def report(self, context: ErrorContext) -> None:
        key, value, headers = self._payload(context.record)
        if self.settings.context_headers:
            headers = headers + [
                (name, text.encode("utf-8"))
                for name, text in failure_description(context).items()
            ]
        topic = self.settings.topic
        if self._metrics is not None:
            self._metrics.deadletterqueue_produce_requests += 1
        try:
            with self._lock:
                if self._producer is None:
                    self._ensure_topic(topic, self.settings.topic_props())
                    self._producer = self._producer_factory()
                producer = self._producer
            delivery = producer.send(topic, value, key, headers or None)
            delivery.result(timeout=self.settings.delivery_timeout_s)
        except Exception as exc:
            if self._metrics is not None:
                self._metrics.deadletterqueue_produce_failures += 1
            raise DeadLetterQueueError(
                f"task {context.task}: cannot write a bad record ({context.stage}: "
                f"{type(context.error).__name__}: {context.error}) to the dead-letter topic "
                f"{topic!r}: {type(exc).__name__}: {exc}"
            ) from exc
        self.written += 1
        log.debug("task %s: record failed in %s written to %r", context.task, context.stage, topic)

    def close(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            try:
                producer.close(self.settings.delivery_timeout_s)
            except Exception:
                log.exception("closing the dead-letter queue's producer failed")

    def _payload(self, record: Any) -> tuple[bytes | None, bytes | None, LogHeaders]:
        if isinstance(record, ConsumerRecord):
            return record.key, record.value, list(record.headers)
        if isinstance(record, ConnectRecord):
            if self._converters is not None:
                try:
                    return self._converters.to_log(record)
                except Exception:
                    log.debug("the bad record cannot be converted; writing it as JSON text")
            return _json_bytes(record.key), _json_bytes(record.value), [
                (name, _json_bytes(data)) for name, data in record.headers
            ]
        return None, _json_bytes(repr(record)), []


def _record_offset(record: Any) -> int | None:
    if isinstance(record, ConsumerRecord):
        return record.offset
    offset = getattr(record, "kafka_offset", None)
    return offset if isinstance(offset, int) and offset >= 0 else None


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, default=str)


def _json_bytes(data: Any) -> bytes | None:
    if data is None:
        return None
    if isinstance(data, bytes):
        return data
    return _json(data).encode("utf-8")
