"""The loop of one sink task: consumer -> converters -> transforms -> ``put``.

::

    SyncConsumer.poll (group connect-<connector>, enable.auto.commit=false)
        --> RecordConverters.to_sink_record --> TransformChain.apply --> task.put(batch)
    every offset.flush.interval.ms, on request_commit, on revoke and at stop:
        task.pre_commit(offsets put so far) --> consumer.commit(returned offsets)

Without transforms, each partition's run of polled records is converted in
bulk (``RecordConverters.to_sink_records``: values column by column, records
built in one loop); a run it cannot take goes record by record, with the same
results.

Offsets are committed only after ``pre_commit`` (by default ``flush``) made
the records durable: at-least-once. A ``RetriableError`` from ``put``
redelivers the same batch after a backoff, with every partition paused
meanwhile (the consumer keeps polling, so the group keeps the member). Bad
records in converters or transforms follow ``errors.*``; any other exception
fails the task, and the partitions are then closed without a commit.

Paused (target state PAUSED), the runner pauses every assigned partition and
keeps polling. ``topics.regex`` subscriptions are refreshed every
``PATTERN_REFRESH_S`` from the cluster's topic list; topics named in
``topics`` that do not exist yet are subscribed to once they do.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from connect_worker.metrics.task_metrics import PartitionLag
from connect_worker.runtime.error_handling import Stage, StageError
from connect_worker.runtime.sink_context import RunnerSinkContext, to_api, to_log
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.task_parts import TaskParts
from connect_worker.runtime.task_runner import WAKE_INTERVAL_S, TaskRunner
from connectors.api import ConfigError, DataError, RetriableError, SinkRecord, SinkTask
from connectors.api.metrics import NO_METRICS
from log_engine.client import ConsumerRecord, SyncConsumer
from log_engine.client import TopicPartition as LogPartition
from log_engine.client.errors import KafkaError

log = logging.getLogger(__name__)

PATTERN_REFRESH_S = 5.0
#: A missing topic is looked for again after 50 ms, then less often (doubling) up to 0.5 s:
#: a sink started just before its source sees the new topic at once.
MISSING_TOPIC_RECHECK_MIN_S = 0.05
MISSING_TOPIC_RECHECK_MAX_S = 0.5


@dataclass(frozen=True, slots=True)
class SinkRunnerSettings:
    """Intervals of a sink task's loop."""

    offset_flush_interval_ms: int = 60000
    poll_timeout_ms: int = 500


@dataclass(slots=True)
class _Batch:
    """Records waiting for ``put``, with the consumer offsets they cover."""

    records: list[SinkRecord]
    next_offsets: dict[LogPartition, int]  # per partition: the offset after the last record
    first_offsets: dict[LogPartition, int]

    def extended(self, later: _Batch | None) -> _Batch:
        """This batch followed by ``later`` (records read while this one waited)."""
        if later is None:
            return self
        return _Batch(
            self.records + later.records,
            {**self.next_offsets, **later.next_offsets},
            {**later.first_offsets, **self.first_offsets},
        )


class SinkTaskRunner(TaskRunner):
    """Runs one :class:`SinkTask` (see the module doc; lifecycle in :mod:`.task_runner`).

    Owns the task, its consumer (made by ``consumer_factory`` in the task
    thread, group ``connect-<connector>``), transforms and converters.
    ``topics`` or ``topics_regex`` says what to read; ``list_topics`` lists the
    cluster's topics for the regex.
    """

    def __init__(
        self,
        task_id: TaskId,
        task: SinkTask,
        task_props: Mapping[str, str],
        parts: TaskParts,
        *,
        consumer_factory: Callable[[], SyncConsumer],
        list_topics: Callable[[], list[str]],
        settings: SinkRunnerSettings,
    ) -> None:
        super().__init__(task_id, parts)
        self.task = task
        self._props = dict(task_props)
        self._topics, self._pattern = _subscription(task_props)
        self._chain = parts.chain
        self._converters = parts.converters
        self._errors = parts.errors
        self._consumer_factory = consumer_factory
        self._consumer: SyncConsumer | None = None
        self._list_topics = list_topics
        self._on_topic = parts.on_topic
        self._settings = settings
        self._task_metrics = parts.metrics
        self._metrics = parts.metrics.sink_metrics() if parts.metrics is not None else None
        self.context = RunnerSinkContext(
            task_id.task,
            parts.bootstrap_servers,
            parts.metrics.plugin if parts.metrics is not None else NO_METRICS,
        )
        self._open: frozenset[LogPartition] = frozenset()
        self._current: dict[LogPartition, int] = {}  # next offset after what put() accepted
        self._committed: dict[LogPartition, int] = {}
        self._pending: _Batch | None = None
        self._consumer_paused: set[LogPartition] = set()
        self._task_told_paused = False  # on_pause() called, on_resume() not yet
        self._subscribed: tuple[str, ...] | None = None
        self._next_topic_check = 0.0
        self._missing_recheck_s = MISSING_TOPIC_RECHECK_MIN_S
        self._next_commit = 0.0
        self._failed = False
        self.commits = 0

    # -- lifecycle -----------------------------------------------------------------------

    def stop(self) -> None:
        """Ask the loop to end; the plugin's ``stop()`` then runs in the task thread."""
        self.stopping.set()
        self._resumed.set()

    def run(self, on_running: Callable[[], None]) -> None:
        try:
            self._consumer = self._consumer_factory()
            if self._metrics is not None:
                self._metrics.client_id = str(self._consumer.config.client_id or "")
                self._metrics.live_partition_count = lambda: len(self._open)
                self._metrics.live_lags = self._lags
            self.task.initialize(self.context)
            self.task.start(self._props)
            if not self._plugin_start_done():
                return
            on_running()
            self._next_commit = time.monotonic() + self._settings.offset_flush_interval_ms / 1000
            self._loop()
        except BaseException:
            self._failed = True
            raise
        finally:
            self._shut_down()

    def _stop_plugin(self) -> None:
        self.task.stop()

    def _shut_down(self) -> None:
        consumer = self._consumer
        if consumer is not None:
            try:
                self._close_partitions(self._open)
            except Exception:
                log.exception("task %s: closing partitions at stop failed", self.task_id)
            try:
                consumer.close()
            except Exception:
                log.exception("task %s: closing the consumer failed", self.task_id)
        self._stop_plugin_once(only_if_started=True)
        self._chain.close()
        self._errors.close()

    # -- the loop ------------------------------------------------------------------------

    def _loop(self) -> None:
        assert self._consumer is not None
        consumer = self._consumer
        timeout_s = self._settings.poll_timeout_ms / 1000
        while not self.stopping.is_set():
            self._tell_task_if_paused()
            self._refresh_subscription()
            if self._subscribed is None:  # none of the topics exists yet
                until_check_s = self._next_topic_check - time.monotonic()
                self.stopping.wait(min(WAKE_INTERVAL_S, max(until_check_s, 0.01)))
                continue
            self._apply_seeks()
            self._sync_pauses()
            raw = consumer.poll(timeout_s)
            if raw and self._metrics is not None:
                self._metrics.record_read(len(raw), time.monotonic())
            if raw and self.context.has_seeks():  # a seek asked for during this poll wins
                raw = self._apply_seeks(raw)
            batch = self._convert(raw) if raw else None
            if self._pending is not None:
                batch = self._pending.extended(batch)
            if batch is not None:
                self._deliver(batch)
            if self.context.take_commit_request() or time.monotonic() >= self._next_commit:
                self._commit(self._open)

    def _tell_task_if_paused(self) -> None:
        """Call the task's ``on_pause``/``on_resume`` when the runner's state changed."""
        paused = self.paused
        if paused == self._task_told_paused:
            return
        self._task_told_paused = paused
        if paused:
            self.task.on_pause()
        else:
            self.task.on_resume()

    def _convert(self, raw: list[ConsumerRecord]) -> _Batch:
        if self._chain:
            return self._convert_each(raw)
        return self._convert_runs(raw)

    def _convert_runs(self, raw: list[ConsumerRecord]) -> _Batch:
        """The bulk path (no transforms): each partition's run of records converted at once.

        A poll returns each partition's records as one run, so offsets are noted
        once per run. A run the bulk conversion cannot take (headers, a record
        that fails to convert) goes through :meth:`_convert_each`, which reports
        the bad record as usual.
        """
        records: list[SinkRecord] = []
        next_offsets: dict[LogPartition, int] = {}
        first_offsets: dict[LogPartition, int] = {}
        count = len(raw)
        start = 0
        while start < count:
            topic, partition = raw[start][0], raw[start][1]
            stop = start + 1
            while stop < count and raw[stop][1] == partition and raw[stop][0] == topic:
                stop += 1
            run = raw if start == 0 and stop == count else raw[start:stop]
            converted = self._converters.to_sink_records(run)
            if converted is None:
                part = self._convert_each(run)
                records += part.records
                next_offsets.update(part.next_offsets)
                for tp, offset in part.first_offsets.items():
                    first_offsets.setdefault(tp, offset)
            else:
                records += converted
                tp = LogPartition(topic, partition)
                first_offsets.setdefault(tp, run[0][2])
                next_offsets[tp] = run[-1][2] + 1
            start = stop
        return _Batch(records, next_offsets, first_offsets)

    def _convert_each(self, raw: list[ConsumerRecord]) -> _Batch:
        """The per-record path: converters, transforms and error handling record by record."""
        records: list[SinkRecord] = []
        next_offsets: dict[LogPartition, int] = {}
        first_offsets: dict[LogPartition, int] = {}
        # Per record only what must be: a poll returns each partition's records as a run,
        # so offsets are noted per run, and with no transforms the converters are called
        # directly (this loop is a third of a sink's cost per record).
        process = self._process if self._chain else self._converters.to_sink_record
        recover = self._errors.recover
        append = records.append
        topic, partition, tp, last = "", -1, None, -1
        for record in raw:
            if record.partition != partition or record.topic != topic:
                if tp is not None:
                    next_offsets[tp] = last + 1
                topic, partition = record.topic, record.partition
                tp = LogPartition(topic, partition)
                first_offsets.setdefault(tp, record.offset)
            last = record.offset
            try:
                out = process(record)
            except Exception as exc:
                out = recover(process, record, exc)
            if out is not None:
                append(out)
        if tp is not None:
            next_offsets[tp] = last + 1
        return _Batch(records, next_offsets, first_offsets)

    def _process(self, record: ConsumerRecord) -> SinkRecord | None:
        sink_record = self._converters.to_sink_record(record)
        if not self._chain:
            return sink_record
        try:
            return self._chain.apply(sink_record)
        except Exception as exc:
            raise StageError(Stage.TRANSFORMATION, exc) from exc

    def _deliver(self, batch: _Batch) -> None:
        """``put`` the batch; keep it for later (partitions paused) on RetriableError or pause."""
        if not self._resumed.is_set():  # paused meanwhile: put it once resumed
            self._pending = batch
            return
        try:
            if batch.records:
                self._put(batch.records)
        except RetriableError as exc:
            self._pending = batch
            self._sync_pauses()
            self._back_off("put()", exc)
            return
        self._pending = None
        self._retry_backoff.reset()
        for tp, offset in batch.next_offsets.items():
            if tp in self._open:
                self._current[tp] = offset

    def _put(self, records: list[SinkRecord]) -> None:
        """``put``; after a DataError under errors.tolerance=all, one record at a time.

        The records ``put`` still refuses alone go to the error handler (stage
        TASK_PUT: dead-letter queue, log); under ``none`` the DataError fails the task.
        """
        metrics = self._metrics
        started = time.monotonic() if metrics is not None else 0.0
        accepted = len(records)
        try:
            self.task.put(records)
        except DataError:
            if not self._errors.settings.tolerance_all:
                raise
            for record in records:
                try:
                    self.task.put([record])
                except DataError as exc:
                    accepted -= 1
                    self._errors.tolerate(Stage.TASK_PUT, record, exc)
        if metrics is not None:
            now = time.monotonic()
            metrics.record_put(accepted, now - started, now)
            assert self._task_metrics is not None
            self._task_metrics.batch_size.record(len(records), now)

    # -- offsets -------------------------------------------------------------------------

    def _commit(self, partitions: frozenset[LogPartition]) -> None:
        """pre_commit what put() accepted, then commit what the task returned."""
        self._next_commit = time.monotonic() + self._settings.offset_flush_interval_ms / 1000
        offsets = {tp: o for tp, o in self._current.items() if tp in partitions}
        if not offsets or all(self._committed.get(tp) == o for tp, o in offsets.items()):
            return
        started = time.monotonic()
        try:
            safe = self.task.pre_commit({to_api(tp): o for tp, o in offsets.items()})
        except RetriableError as exc:
            log.warning("task %s: pre_commit() failed (%s); retrying later", self.task_id, exc)
            self._commit_done(started, ok=False)
            return
        to_commit = {to_log(tp): int(o) for tp, o in (safe or {}).items()}
        to_commit = {tp: o for tp, o in to_commit.items() if tp in partitions}
        if not to_commit:
            return
        assert self._consumer is not None
        try:
            self._consumer.commit(to_commit)
        except KafkaError as exc:
            log.warning(
                "task %s: committing offsets failed (%s); retrying later", self.task_id, exc
            )
            self._commit_done(started, ok=False)
            return
        self._committed.update(to_commit)
        self.commits += 1
        self._commit_done(started, ok=True)

    def _commit_done(self, started: float, *, ok: bool) -> None:
        """Record an offset commit's time and outcome in the task's metrics."""
        if self._task_metrics is None or self._metrics is None:
            return
        now = time.monotonic()
        self._task_metrics.record_offset_commit(now - started, ok, now)
        if ok:
            self._metrics.record_commit_completed(now)

    def _lags(self) -> list[PartitionLag]:
        """Each assigned partition's lag (log end minus position), read at scrape time."""
        consumer = self._consumer
        if consumer is None:
            return []
        lags = []
        for tp in sorted(self._open, key=lambda p: (p.topic, p.partition)):
            lag = consumer.current_lag(tp)
            if lag is not None:
                lags.append(PartitionLag(tp.topic, tp.partition, lag))
        return lags

    def _apply_seeks(self, raw: list[ConsumerRecord] | None = None) -> list[ConsumerRecord]:
        """Seek where the task asked; drop polled records of those partitions."""
        seeks = self.context.take_seeks(self._open)
        if not seeks:
            return raw or []
        assert self._consumer is not None
        if self._pending is not None:
            self._rewind(self._pending, skip=seeks.keys())
        for tp, offset in seeks.items():
            self._consumer.seek(tp, offset)
            self._current[tp] = offset
        if not raw:
            return []
        return [r for r in raw if (r.topic, r.partition) not in seeks]

    def _rewind(self, batch: _Batch, skip: object = ()) -> None:
        """Drop a pending batch, seeking its partitions back to its first records."""
        assert self._consumer is not None
        self._pending = None
        for tp, offset in batch.first_offsets.items():
            if tp in self._open and tp not in skip:  # type: ignore[operator]
                self._consumer.seek(tp, offset)

    def _sync_pauses(self) -> None:
        """Make the consumer's paused partitions match what the task and runner want."""
        if self.paused or self._pending is not None:
            wanted = set(self._open)
        else:
            wanted = self.context.paused_by_task() & self._open
        if wanted == self._consumer_paused:
            return
        assert self._consumer is not None
        to_pause, to_resume = wanted - self._consumer_paused, self._consumer_paused - wanted
        if to_pause:
            self._consumer.pause(to_pause)
        if to_resume:
            self._consumer.resume(to_resume)
        self._consumer_paused = wanted

    # -- subscription and rebalances (callbacks run in this thread, inside poll) ---------

    def _refresh_subscription(self) -> None:
        """Subscribe to the wanted topics that exist (re-checked while some are missing).

        A topic that does not exist yet is left out until it does: a group
        member joining before a topic exists would otherwise never be assigned
        its partitions (the source writing it may start after the sink).
        """
        complete = self._pattern is None and self._subscribed == self._topics
        now = time.monotonic()
        if complete or now < self._next_topic_check:
            return
        existing = self._list_topics()
        if self._pattern is None:
            wanted = tuple(t for t in self._topics if t in existing)
            self._next_topic_check = now + self._missing_recheck_s
            self._missing_recheck_s = min(2 * self._missing_recheck_s, MISSING_TOPIC_RECHECK_MAX_S)
        else:
            wanted = tuple(sorted(t for t in existing if self._pattern.fullmatch(t)))
            self._next_topic_check = now + PATTERN_REFRESH_S
        if wanted and wanted != self._subscribed:
            self._subscribe(wanted)

    def _subscribe(self, topics: Sequence[str]) -> None:
        assert self._consumer is not None
        self._consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke)
        self._subscribed = tuple(topics)
        for topic in topics:
            self._on_topic(topic)

    def _on_assign(self, partitions: list[LogPartition]) -> None:
        self._open = self._open | frozenset(partitions)
        self._consumer_paused -= set(partitions)
        self.context.set_assignment(self._open)
        self.task.open([to_api(tp) for tp in partitions])
        self._apply_seeks()  # before the first fetch: a sink storing its offsets resumes there
        self._sync_pauses()  # likewise a pause asked for in open() (a sink reading by itself)

    def _on_revoke(self, partitions: list[LogPartition]) -> None:
        self._close_partitions(frozenset(partitions) & self._open)

    def _close_partitions(self, partitions: frozenset[LogPartition]) -> None:
        if not partitions:
            return
        if self._pending is not None:
            self._pending = None  # its records are read again from the committed offsets
        if not self._failed:
            self._commit(partitions)
        self._open = self._open - partitions
        self.context.set_assignment(self._open)
        self._consumer_paused -= partitions
        for tp in partitions:
            self._current.pop(tp, None)
            self._committed.pop(tp, None)
        self.task.close([to_api(tp) for tp in partitions])


def _subscription(props: Mapping[str, str]) -> tuple[tuple[str, ...], re.Pattern[str] | None]:
    topics = tuple(t.strip() for t in (props.get("topics") or "").split(",") if t.strip())
    regex = (props.get("topics.regex") or "").strip()
    if topics and regex:
        raise ConfigError("topics and topics.regex: set one, not both")
    if regex:
        try:
            return (), re.compile(regex)
        except re.error as exc:
            raise ConfigError(f"topics.regex: not a valid regular expression: {exc}") from None
    if not topics:
        raise ConfigError("topics: a sink connector needs topics or topics.regex")
    return topics, None
