"""Reading the log for the data source: partition discovery, offsets, offset ranges.

The driver side (:class:`LogMetadata`) lists partitions and resolves
``earliest``/``latest`` to absolute offsets; the executor side
(:func:`read_range`) reads one partition's ``[start, end)`` with a consumer
assigned to that partition alone (no group, nothing committed) and turns each
poll into a :class:`pyarrow.RecordBatch` of Spark's Kafka-source columns,
column by column (no per-record Python objects beyond what the client returns).

Lost data (option ``failOnDataLoss``, :class:`DataLoss`) is found on both
sides. The driver compares the offsets a query must read with each
partition's earliest offset (:meth:`LogMetadata.resolve` for explicit
starting offsets; the stream reader for checkpointed positions) and notices
partitions that no longer exist (:meth:`LogMetadata.present`). The executor's
consumer runs with ``auto.offset.reset=none``, so a range whose records
retention removed after it was planned ends in OFFSET_OUT_OF_RANGE instead
of a silent jump; :func:`read_range` then fails or skips to the earliest
offset, and it checks that a partition it waits on still exists. Either way
the failure names the topic-partition, the offset wanted and the earliest
available; with ``failOnDataLoss=false`` the same facts go to a warning.

No pyspark here; pyarrow only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from connectors.api import ConnectError
from log_engine.client import ConsumerRecord, SyncAdmin, SyncConsumer, TopicPartition
from log_engine.client.errors import KafkaError, error_for_code
from spark_sinks.options import EARLIEST, LATEST, OffsetBound, PartitionOffsets, SourceOptions

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
#: Columns and Arrow types of Spark's Kafka source (``headers`` only with includeHeaders).
COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("key", pa.binary(), "binary"),
    ("value", pa.binary(), "binary"),
    ("topic", pa.string(), "string"),
    ("partition", pa.int32(), "int"),
    ("offset", pa.int64(), "long"),
    ("timestamp", pa.timestamp("us", tz="UTC"), "timestamp"),
    ("timestampType", pa.int32(), "int"),
)
#: Records per Arrow batch handed to Spark (bounded memory per task).
ROWS_PER_BATCH_MAX = 20_000
#: A read that makes no progress for this long fails (the records are gone or unreachable).
STALL_TIMEOUT_S = 60.0
#: A read waiting this long for records checks that its partition still exists.
PRESENCE_CHECK_S = 2.0

#: The client's exception for OFFSET_OUT_OF_RANGE (wire code 1), raised by ``poll``
#: with ``auto.offset.reset=none``.
OffsetOutOfRange = error_for_code(1)

log = logging.getLogger(__name__)


class DataLossError(ConnectError):
    """Records or a partition the query must read are gone and ``failOnDataLoss`` is true."""


@dataclass(frozen=True, slots=True)
class DataLoss:
    """The ``failOnDataLoss`` rule: raise :class:`DataLossError`, or log a warning and go on.

    Why fail by default: a query that skips deleted records silently produces
    output that looks complete and is not; the user opts into skipping.
    """

    fail: bool

    def records_gone(self, tp: TopicPartition, wanted: int, earliest: int) -> None:
        """Offsets ``wanted`` .. ``earliest - 1`` of ``tp`` were deleted before being read."""
        self._report(
            f"{tp.topic}-{tp.partition}: the query must read from offset {wanted}, but the "
            f"earliest offset still in the log is {earliest} (retention or DeleteRecords removed "
            f"offsets {wanted} to {earliest - 1})",
            f"reading on from offset {earliest}",
        )

    def records_past_end(self, tp: TopicPartition, wanted: int, latest: int) -> None:
        """``tp`` now ends before ``wanted`` (truncated or re-created)."""
        self._report(
            f"{tp.topic}-{tp.partition}: the query must read from offset {wanted}, but the log "
            f"now ends at offset {latest} (the partition was truncated or re-created)",
            "skipping the rest of this range",
        )

    def partition_gone(self, tp: TopicPartition, wanted: int) -> None:
        """``tp`` no longer exists (topic deleted) while offsets from ``wanted`` were unread."""
        self._report(
            f"{tp.topic}-{tp.partition}: the partition no longer exists (was its topic deleted?); "
            f"the query had read it up to offset {wanted}, and what was written from there on "
            "may never have been read",
            "skipping this partition",
        )

    def _report(self, facts: str, skip: str) -> None:
        if self.fail:
            raise DataLossError(
                f"data loss: {facts}. The query fails rather than skip records silently; "
                "set the option failOnDataLoss=false to skip lost data and read on."
            )
        log.warning("data loss: %s; failOnDataLoss=false, so %s", facts, skip)


def spark_ddl(include_headers: bool) -> str:
    """The Spark schema (DDL) of the data source's rows."""
    cols = [f"{name} {ddl}" for name, _, ddl in COLUMNS]
    if include_headers:
        cols.append("headers array<struct<key:string,value:binary>>")
    return ", ".join(cols)


class LogMetadata:
    """Driver-side view of the log: which partitions, and their offset bounds."""

    def __init__(self, options: SourceOptions) -> None:
        self._options = options
        self._admin: SyncAdmin | None = None
        self._consumer: SyncConsumer | None = None

    def close(self) -> None:
        for client in (self._consumer, self._admin):
            if client is not None:
                client.close()
        self._admin = self._consumer = None

    def partitions(self, *, existing_only: bool = False) -> list[TopicPartition]:
        """The partitions the options select, sorted (topics that do not exist are skipped).

        ``assign`` names partitions as given unless ``existing_only``.
        """
        opts = self._options
        if opts.assign is not None:
            assigned = [TopicPartition(t, p) for t, parts in opts.assign.items() for p in parts]
            return sorted(self.present(assigned) if existing_only else assigned)
        admin = self._get_admin()
        if opts.pattern is not None:
            pattern = opts.pattern
            topics = [t for t in admin.list_topics() if pattern.fullmatch(t)]
        else:
            existing = set(admin.list_topics())
            topics = [t for t in opts.topics if t in existing]
        if not topics:
            return []
        described = admin.describe_topics(topics)
        return sorted(
            TopicPartition(p.topic, p.partition) for d in described.values() for p in d.partitions
        )

    def present(self, partitions: Iterable[TopicPartition]) -> set[TopicPartition]:
        """Those of ``partitions`` that exist now."""
        wanted = set(partitions)
        admin = self._get_admin()
        topics = sorted({tp.topic for tp in wanted} & set(admin.list_topics()))
        if not topics:
            return set()
        described = admin.describe_topics(topics)
        return {
            tp
            for d in described.values()
            for p in d.partitions
            if (tp := TopicPartition(p.topic, p.partition)) in wanted
        }

    def bounds(
        self, partitions: Sequence[TopicPartition]
    ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
        """Each partition's earliest and latest (log end) offsets."""
        if not partitions:
            return {}, {}
        consumer = self._get_consumer()
        return consumer.beginning_offsets(partitions), consumer.end_offsets(partitions)

    def resolve(
        self,
        bound: OffsetBound,
        partitions: Sequence[TopicPartition],
        loss: DataLoss | None = None,
    ) -> PartitionOffsets:
        """Absolute offsets for ``bound``, clamped into each partition's bounds.

        With ``loss``, an explicit offset below the earliest is lost data
        (reported before clamping); without, it is clamped silently (end offsets).
        """
        earliest, latest = self.bounds(partitions)
        out: PartitionOffsets = {}
        for tp in partitions:
            spec = bound.spec(tp.topic, tp.partition)
            if spec == EARLIEST:
                offset = earliest[tp]
            elif spec == LATEST:
                offset = latest[tp]
            else:
                if loss is not None and spec < earliest[tp]:
                    loss.records_gone(tp, spec, earliest[tp])
                offset = min(max(spec, earliest[tp]), latest[tp])
            out.setdefault(tp.topic, {})[tp.partition] = offset
        return out

    def _get_admin(self) -> SyncAdmin:
        if self._admin is None:
            self._admin = SyncAdmin({"bootstrap.servers": self._options.bootstrap})
        return self._admin

    def _get_consumer(self) -> SyncConsumer:
        if self._consumer is None:
            self._consumer = SyncConsumer(
                {"bootstrap.servers": self._options.bootstrap, "enable.auto.commit": "false"}
            )
        return self._consumer


def read_range(
    bootstrap: str,
    topic: str,
    partition: int,
    start: int,
    end: int,
    include_headers: bool,
    loss: DataLoss = DataLoss(fail=True),
) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``topic-partition`` with ``start <= offset < end`` as Arrow.

    Records deleted before they were read, or a partition deleted meanwhile,
    go to ``loss`` (fail, or warn and skip them).
    """
    if start >= end:
        return
    reader = _RangeReader(bootstrap, TopicPartition(topic, partition), end, loss)
    pending: list[ConsumerRecord] = []
    for records in reader.polls(start):
        pending += records
        if len(pending) >= ROWS_PER_BATCH_MAX:
            yield to_arrow(pending, include_headers)
            pending = []
    if pending:
        yield to_arrow(pending, include_headers)


class _RangeReader:
    """Polls one partition up to ``end`` with a consumer of its own (no group, no commits).

    After OFFSET_OUT_OF_RANGE it seeks to where ``loss`` says to read on.
    """

    def __init__(self, bootstrap: str, tp: TopicPartition, end: int, loss: DataLoss) -> None:
        self._bootstrap = bootstrap
        self._tp = tp
        self._end = end
        self._loss = loss
        self._config = {
            "bootstrap.servers": bootstrap,
            "enable.auto.commit": "false",
            "auto.offset.reset": "none",  # out of range is lost data, for ``loss`` to judge
            "max.poll.records": str(ROWS_PER_BATCH_MAX),
            "max.partition.fetch.bytes": str(16 * 1024 * 1024),
            "fetch.max.bytes": str(32 * 1024 * 1024),
        }

    def polls(self, start: int) -> Iterator[list[ConsumerRecord]]:
        """Each poll's records below ``end``, from ``start`` on (gaps per ``loss``)."""
        tp, end = self._tp, self._end
        position = start
        last_progress = last_check = time.monotonic()
        with SyncConsumer(self._config) as consumer:
            consumer.assign([tp])
            consumer.seek(tp, position)
            while position < end:
                try:
                    records = consumer.poll(0.5)
                except OffsetOutOfRange:
                    position = self._after_out_of_range(consumer, position)
                    consumer.seek(tp, position)
                    continue
                now = time.monotonic()
                if records:
                    last_progress = last_check = now
                    if records[-1].offset >= end:
                        records = [r for r in records if r.offset < end]
                    yield records
                position = max(position, consumer.position(tp))
                if position >= end:
                    return
                if now - last_check > PRESENCE_CHECK_S:
                    last_check = now
                    if not self._exists():
                        self._loss.partition_gone(tp, position)
                        return
                if now - last_progress > STALL_TIMEOUT_S:
                    raise ConnectError(
                        f"reading {tp.topic}-{tp.partition}: no progress at offset "
                        f"{position} for {STALL_TIMEOUT_S:.0f}s (wanted up to {end})"
                    )

    def _after_out_of_range(self, consumer: SyncConsumer, position: int) -> int:
        """Where to read on after OFFSET_OUT_OF_RANGE at ``position`` (``end``: nowhere)."""
        tp = self._tp
        earliest = consumer.beginning_offsets([tp])[tp]
        latest = consumer.end_offsets([tp])[tp]
        if position < earliest:
            self._loss.records_gone(tp, position, earliest)
            return min(earliest, self._end)
        if position > latest:
            self._loss.records_past_end(tp, position, latest)
            return self._end
        return position  # back in range by now: read on

    def _exists(self) -> bool:
        tp = self._tp
        try:
            with SyncAdmin({"bootstrap.servers": self._bootstrap}) as admin:
                if tp.topic not in admin.list_topics():
                    return False
                described = admin.describe_topics([tp.topic])
        except KafkaError:
            return True  # cannot tell: keep waiting (the stall timeout still applies)
        return any(p.partition == tp.partition for d in described.values() for p in d.partitions)


def to_arrow(records: Sequence[ConsumerRecord], include_headers: bool) -> pa.RecordBatch:
    """One column per field, built from the transposed records."""
    topics, partitions, offsets, timestamps, keys, values, headers, types = zip(
        *records, strict=True
    )
    columns = [
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array(topics, pa.string()),
        pa.array(partitions, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(timestamps, pa.int64())
        .cast(pa.timestamp("ms", tz="UTC"))
        .cast(pa.timestamp("us", tz="UTC")),
        pa.array(types, pa.int32()),  # 0 CreateTime, 1 LogAppendTime
    ]
    names = [name for name, _, _ in COLUMNS]
    if include_headers:
        columns.append(pa.array(headers, HEADER_TYPE))
        names.append("headers")
    return pa.RecordBatch.from_arrays(columns, names=names)
