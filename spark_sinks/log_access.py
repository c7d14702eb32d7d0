"""Reading the log for the data source: partition discovery, offsets, offset ranges.

The driver side (:class:`LogMetadata`) lists partitions and resolves
``earliest``/``latest`` to absolute offsets; the executor side
(:func:`read_range`) reads one partition's ``[start, end)`` with a consumer
assigned to that partition alone (no group, nothing committed) and turns each
poll into a :class:`pyarrow.RecordBatch` of Spark's Kafka-source columns,
column by column (no per-record Python objects beyond what the client returns).

No pyspark here; pyarrow only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import pyarrow as pa

from connectors.api import ConnectError
from log_engine.client import ConsumerRecord, SyncAdmin, SyncConsumer, TopicPartition
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

    def partitions(self) -> list[TopicPartition]:
        """The partitions the options select, sorted (topics that do not exist are skipped)."""
        opts = self._options
        if opts.assign is not None:
            return sorted(TopicPartition(t, p) for t, parts in opts.assign.items() for p in parts)
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

    def bounds(
        self, partitions: Sequence[TopicPartition]
    ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
        """Each partition's earliest and latest (log end) offsets."""
        if not partitions:
            return {}, {}
        consumer = self._get_consumer()
        return consumer.beginning_offsets(partitions), consumer.end_offsets(partitions)

    def resolve(self, bound: OffsetBound, partitions: Sequence[TopicPartition]) -> PartitionOffsets:
        """Absolute offsets for ``bound`` (clamped into each partition's bounds)."""
        earliest, latest = self.bounds(partitions)
        out: PartitionOffsets = {}
        for tp in partitions:
            spec = bound.spec(tp.topic, tp.partition)
            if spec == EARLIEST:
                offset = earliest[tp]
            elif spec == LATEST:
                offset = latest[tp]
            else:
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
    bootstrap: str, topic: str, partition: int, start: int, end: int, include_headers: bool
) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``topic-partition`` with ``start <= offset < end`` as Arrow."""
    if start >= end:
        return
    tp = TopicPartition(topic, partition)
    config = {
        "bootstrap.servers": bootstrap,
        "enable.auto.commit": "false",
        "max.poll.records": str(ROWS_PER_BATCH_MAX),
        "max.partition.fetch.bytes": str(16 * 1024 * 1024),
        "fetch.max.bytes": str(32 * 1024 * 1024),
    }
    with SyncConsumer(config) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, start)
        pending: list[ConsumerRecord] = []
        position = start
        last_progress = time.monotonic()
        while position < end:
            records = consumer.poll(0.5)
            if records:
                last_progress = time.monotonic()
                if records[-1].offset >= end:
                    records = [r for r in records if r.offset < end]
                pending += records
                if len(pending) >= ROWS_PER_BATCH_MAX:
                    yield to_arrow(pending, include_headers)
                    pending = []
            position = max(position, consumer.position(tp))
            if position < end and time.monotonic() - last_progress > STALL_TIMEOUT_S:
                raise ConnectError(
                    f"reading {topic}-{partition}: no progress at offset {position} "
                    f"for {STALL_TIMEOUT_S:.0f}s (wanted up to {end})"
                )
        if pending:
            yield to_arrow(pending, include_headers)


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
