"""The loop of one source task: poll -> transforms -> converters -> producer.

::

    task.poll() --records--> TransformChain.apply --> RecordConverters.to_log
        --> TopicCreator.ensure (first use) --> SyncProducer.send --> SubmittedRecords

    OffsetCommitter: after the first acknowledged batch, every offset.flush.interval.ms
        and at stop -> OffsetStore, task.commit()

Delivery is at least once. The offsets of the first acknowledged batch are
stored at once, so after a kill -9 the task re-sends at most what was
acknowledged since the last commit (about one flush interval of records plus
the batch in flight), never everything since it started.

Without transforms, a polled batch takes the bulk path: converted column by
column (``RecordConverters.to_log_many``), handed over with one
``SyncProducer.send_many``, tracked per delivered run of records. Anything the
bulk path cannot take (several topics, a record failing to convert)
goes the per-record way, with the same results.

Exceptions, one behaviour each: ``RetriableError`` from ``poll`` (or a
retriable client error from ``send``) -> back off and retry the unsent tail of
the batch; a bad record in a transform or converter -> the connector's
``errors.*`` settings (:mod:`~connect_worker.runtime.error_handling`);
anything else -> ``run`` raises and the task is FAILED with the trace.

Back-pressure: at most ``max_in_flight_records`` records may wait for their
acknowledgement; the loop waits for the oldest before sending more (and the
producer's ``buffer.memory`` bounds the bytes).

Stopping: the task's ``stop()`` comes last, after the producer is flushed and
the final offset commit called ``task.commit()``, so a task that acknowledges
upstream in ``commit()`` (MQTT acks, PostgreSQL LSN confirmations) does so
while its connection is still open, and a clean stop leaves nothing to be
delivered again. That needs ``poll()`` to return on its own, which every poll
should do within a second or so; one that blocks longer gets ``stop()`` after
:data:`STOP_GRACE_S` to unblock it (Kafka Connect's contract for ``stop()``),
and its last records are then acknowledged upstream only after a restart.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connect_worker.runtime.conversion import LogHeaders
from connect_worker.runtime.error_handling import Stage, StageError
from connect_worker.runtime.source_offsets import OffsetCommitter, SubmittedRecords
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.task_parts import TaskParts
from connect_worker.runtime.task_runner import WAKE_INTERVAL_S, TaskRunner
from connect_worker.runtime.topics import TopicCreator
from connect_worker.storage.offsets import OffsetStore
from connectors.api import ConnectError, RetriableError, SourceRecord, SourceTask
from connectors.api.metrics import NO_METRICS, TaskMetrics
from log_engine.client import SyncProducer
from log_engine.client.errors import is_retriable

log = logging.getLogger(__name__)

Processed = tuple[SourceRecord, bytes | None, bytes | None, LogHeaders]

#: How long a stop waits for ``poll()`` to return before calling the task's ``stop()``.
STOP_GRACE_S = 1.0


@dataclass(frozen=True, slots=True)
class SourceRunnerSettings:
    """Bounds and intervals of a source task's loop."""

    offset_flush_interval_ms: int = 60000
    offset_flush_timeout_ms: int = 5000
    max_in_flight_records: int = 50000


class _OffsetReader:
    """The task's view of its connector's stored offsets."""

    def __init__(self, store: OffsetStore, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self._store.get(self._connector, partition)

    def offsets(
        self, partitions: Sequence[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self._store.get(self._connector, p)) for p in partitions]


class _SourceContext:
    def __init__(
        self,
        task_id: int,
        reader: _OffsetReader,
        bootstrap_servers: str,
        metrics: TaskMetrics = NO_METRICS,
    ) -> None:
        self._task_id = task_id
        self._reader = reader
        self._bootstrap_servers = bootstrap_servers
        self._metrics = metrics

    @property
    def metrics(self) -> TaskMetrics:
        return self._metrics

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap_servers

    @property
    def offset_reader(self) -> _OffsetReader:
        return self._reader

    @property
    def task_id(self) -> int:
        return self._task_id


class SourceTaskRunner(TaskRunner):
    """Runs one :class:`SourceTask` (see the module doc; lifecycle in :mod:`.task_runner`).

    Owns the task, its producer (made by ``producer_factory`` in the task
    thread), its transform chain and converters. Offsets go to ``offsets``.
    """

    def __init__(
        self,
        task_id: TaskId,
        task: SourceTask,
        task_props: Mapping[str, str],
        parts: TaskParts,
        *,
        producer_factory: Callable[[], SyncProducer],
        offsets: OffsetStore,
        topics: TopicCreator,
        settings: SourceRunnerSettings,
    ) -> None:
        super().__init__(task_id, parts)
        self.task = task
        self._props = dict(task_props)
        self._chain = parts.chain
        self._converters = parts.converters
        self._errors = parts.errors
        self._bootstrap_servers = parts.bootstrap_servers
        self._producer_factory = producer_factory
        self._producer: SyncProducer | None = None
        self._store = offsets
        self._topics = topics
        self._on_topic = parts.on_topic
        self._known_topics: set[str] = set()
        self._settings = settings
        self.submitted = SubmittedRecords()
        self._stop_timer: threading.Timer | None = None
        self._task_metrics = parts.metrics
        self._metrics = parts.metrics.source_metrics() if parts.metrics is not None else None
        self._dropped = 0  # records of the batch being sent that transforms or errors dropped
        overrides_commit_record = type(task).commit_record is not SourceTask.commit_record
        self.committer = OffsetCommitter(
            task_id.connector,
            task,
            offsets,
            self.submitted,
            interval_ms=settings.offset_flush_interval_ms,
            on_ack=task.commit_record if overrides_commit_record else None,
            on_failure=self._delivery_failed,
            first_ack_wait_ms=settings.offset_flush_timeout_ms,
            on_commit=parts.metrics.record_offset_commit if parts.metrics is not None else None,
        )

    # -- lifecycle -----------------------------------------------------------------------

    def run(self, on_running: Callable[[], None]) -> None:
        try:
            self._producer = self._producer_factory()
            context = _SourceContext(
                self.task_id.task,
                _OffsetReader(self._store, self.task_id.connector),
                self._bootstrap_servers,
                self._task_metrics.plugin if self._task_metrics is not None else NO_METRICS,
            )
            if self._metrics is not None:
                submitted = self.submitted
                self._metrics.live_active_count = lambda: submitted.in_flight
            self.task.initialize(context)
            self.task.start(self._props)
            if not self._plugin_start_done():
                return
            on_running()
            self._loop()
        finally:
            self._shut_down()

    def stop(self) -> None:
        """Ask the loop to end; the task's ``stop()`` follows the final commit (module doc)."""
        with self._lifecycle_lock:
            first = not self.stopping.is_set()
            self.stopping.set()
        self._resumed.set()
        if first:
            timer = threading.Timer(STOP_GRACE_S, self._stop_after_grace)
            timer.daemon = True
            timer.name = f"stop-grace-{self.task_id}"
            self._stop_timer = timer
            timer.start()

    def _stop_after_grace(self) -> None:
        log.info(
            "task %s: still working %.1fs after the stop request; calling its stop()",
            self.task_id, STOP_GRACE_S,
        )
        self._stop_plugin_once(only_if_started=True)

    def _stop_plugin(self) -> None:
        self.task.stop()

    def _shut_down(self) -> None:
        """Deliver what was sent, commit its offsets, stop the plugin, close the producer."""
        producer = self._producer
        if producer is not None:
            try:
                producer.flush(self._settings.offset_flush_timeout_ms / 1000)
            except Exception as exc:
                log.warning("task %s: flushing the producer at stop failed: %s", self.task_id, exc)
        try:
            self.committer.commit()
        except Exception as exc:
            log.warning("task %s: final offset commit incomplete: %s", self.task_id, exc)
        self._stop_plugin_once(only_if_started=True)
        timer = self._stop_timer
        if timer is not None:
            timer.cancel()
        if producer is not None:
            try:
                producer.close(self._settings.offset_flush_timeout_ms / 1000)
            except Exception:
                log.exception("task %s: closing the producer failed", self.task_id)
        self._chain.close()
        self._errors.close()

    # -- the loop ------------------------------------------------------------------------

    def _loop(self) -> None:
        batch: list[SourceRecord] = []
        committer = self.committer
        while not self.stopping.is_set():
            if not self._wait_while_paused():
                committer.collect()
                committer.maybe_commit(time.monotonic())
                continue
            if not batch:
                batch = self._poll()
            if batch:
                self._dropped = 0
                sent = self._send_batch(batch)
                if self._metrics is not None:
                    self._metrics.record_write(sent - self._dropped, time.monotonic())
                batch = batch[sent:] if sent < len(batch) else []
                committer.collect()
            committer.maybe_commit(time.monotonic())

    def _poll(self) -> list[SourceRecord]:
        metrics = self._metrics
        started = time.monotonic() if metrics is not None else 0.0
        try:
            records = self.task.poll()
        except RetriableError as exc:
            self._back_off("poll()", exc)
            return []
        self._retry_backoff.reset()
        if not records:
            return []
        if metrics is not None:
            now = time.monotonic()
            metrics.record_poll(len(records), now - started, now)
            assert self._task_metrics is not None
            self._task_metrics.batch_size.record(len(records), now)
        return list(records)

    def _send_batch(self, batch: list[SourceRecord]) -> int:
        """Send ``batch``; returns how many records were handled (fewer after a retriable error)."""
        if not self._chain:
            sent = self._send_columns(batch)
            if sent is not None:
                return sent
        return self._send_each(batch)

    def _send_columns(self, batch: list[SourceRecord]) -> int | None:
        """The bulk path: convert ``batch`` column by column and hand it over in one call.

        For a connector without transforms. None when the batch needs the
        per-record path (several topics, a record that fails to convert:
        :meth:`_send_each` then reports it as usual). Otherwise returns how many
        records were handled, at most as many as the in-flight bound leaves room for.
        """
        assert self._producer is not None
        limit = self._settings.max_in_flight_records
        if self.submitted.in_flight >= limit and not self._wait_for_room():
            return 0
        room = limit - self.submitted.in_flight
        records = batch if len(batch) <= room else batch[:room]
        columns = self._converters.to_log_many(records)
        if columns is None:
            return None
        topic = columns.topic
        try:
            if topic not in self._known_topics:
                self._first_use(topic)
        except Exception as exc:
            self._retriable_or_raise(topic, exc)
            return 0
        result = self._producer.send_many(
            topic, columns.values, columns.keys, columns.headers, columns.partitions,
            columns.timestamps,
        )
        submit = self.submitted.submit_many
        for start, stop, future in result.segments:
            submit(records, start, stop, future)
        if result.error is not None:
            self._retriable_or_raise(topic, result.error)
            return result.sent
        self._retry_backoff.reset()
        return len(records)

    def _retriable_or_raise(self, topic: str, exc: BaseException) -> None:
        """Back off after a retriable error sending to ``topic``; raise any other."""
        if not (is_retriable(exc) or isinstance(exc, RetriableError)):
            raise exc
        self._back_off(f"sending to {topic!r}", exc)

    def _send_each(self, batch: list[SourceRecord]) -> int:
        """The per-record path: transforms, converters and error handling record by record."""
        assert self._producer is not None
        send = self._producer.send
        submit = self.submitted.submit
        process = self._process if self._chain else self._convert  # no per-record chain check
        known = self._known_topics
        max_in_flight = self._settings.max_in_flight_records
        for index, record in enumerate(batch):
            if self.submitted.in_flight >= max_in_flight and not self._wait_for_room():
                return index
            try:
                processed = process(record)
            except Exception as exc:
                processed = self._errors.recover(process, record, exc)
            if processed is None:
                submit(record, None)
                self._dropped += 1
                continue
            out, key, value, headers = processed
            topic = out.topic
            try:
                if topic not in known:
                    self._first_use(topic)
                delivery = send(topic, value, key, headers or None, out.partition, out.timestamp)
            except Exception as exc:
                if not (is_retriable(exc) or isinstance(exc, RetriableError)):
                    raise
                self._back_off(f"sending to {topic!r}", exc)
                return index
            submit(record, delivery)
        self._retry_backoff.reset()
        return len(batch)

    def _process(self, record: SourceRecord) -> Processed | None:
        """Transform and convert one record; None when a transform dropped it."""
        out: SourceRecord | None = record
        if self._chain:
            try:
                out = self._chain.apply(record)
            except Exception as exc:
                raise StageError(Stage.TRANSFORMATION, exc) from exc
            if out is None:
                return None
        assert out is not None
        key, value, headers = self._converters.to_log(out)
        return out, key, value, headers

    def _convert(self, record: SourceRecord) -> Processed:
        """:meth:`_process` for a connector without transforms."""
        key, value, headers = self._converters.to_log(record)
        return record, key, value, headers

    def _first_use(self, topic: str) -> None:
        self._topics.ensure(topic, self._props)
        self._known_topics.add(topic)
        self._on_topic(topic)

    def _wait_for_room(self) -> bool:
        """Wait until fewer than the in-flight bound wait for acks; False when stopping."""
        limit = self._settings.max_in_flight_records
        self.committer.collect()
        while self.submitted.in_flight >= limit:
            if self.stopping.is_set():
                return False
            head = self.submitted.oldest_pending()
            if head is not None:
                concurrent.futures.wait([head], timeout=WAKE_INTERVAL_S)
            self.committer.collect()
        return True

    def _delivery_failed(self, record: SourceRecord, error: BaseException) -> None:
        if self._errors.settings.tolerance_all:
            self._errors.tolerate(Stage.KAFKA_PRODUCE, record, error)
            return
        raise ConnectError(
            f"the log did not accept a record for topic {record.topic!r}: "
            f"{type(error).__name__}: {error}"
        ) from error
