"""The ``sluice`` PySpark data source: topic partitions by offset range, batch and streaming.

::

    spark.read.format("sluice").option("bootstrap.servers", "localhost:9092")
        .option("subscribe", "t1,t2").option("startingOffsets", "earliest").load()
    spark.readStream.format("sluice")...option("maxOffsetsPerTrigger", 10000).load()

Options as Spark's Kafka source (:mod:`spark_sinks.options`); rows with its
schema (:func:`spark_sinks.log_access.spark_ddl`). One Spark input partition
per topic-partition offset range, read by :func:`~spark_sinks.log_access.read_range`
and handed to Spark as Arrow record batches.

Streaming offsets are ``{topic: {partition: next offset}}``, kept in the
query's checkpoint, so a restarted query reads on from where its last
committed micro-batch ended: with a file sink, exactly-once. Read limits
(``maxOffsetsPerTrigger``) split a backlog into micro-batches, also under
``trigger(availableNow=True)`` (the reader mixes in SupportsTriggerAvailableNow
and stops at the log end offsets seen when the query started).

Lost data, as Spark's Kafka source (``failOnDataLoss``, default true: fail;
false: warn and read on): a batch read's explicit startingOffsets below a
partition's earliest offset; a micro-batch whose start (the checkpointed
position) is below the earliest now (found when the batch is planned, so a
failed batch is planned again from the same checkpoint after the option
changes); a partition that no longer exists (found when the next batch's end
is chosen; false drops it from the offsets, and a re-created topic is then
read from its beginning as a new one); a partition new since the last batch
that no longer starts at offset 0; records removed between planning and
reading (found by the executor, :func:`~spark_sinks.log_access.read_range`).

This module imports pyspark; import it only where Spark is used.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from log_engine.client import TopicPartition
from spark_sinks.log_access import DataLoss, LogMetadata, read_range, spark_ddl
from spark_sinks.options import (
    PartitionOffsets,
    SourceOptions,
    from_checkpoint,
    limit_offsets,
    to_checkpoint,
)

FORMAT = "sluice"


def ensure_worker_env() -> None:
    """Python workers run this interpreter (with pyarrow); Spark binds to loopback.

    Must run before the session starts; values already set are kept.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def register(spark: SparkSession) -> None:
    """Make ``format("sluice")`` available in ``spark`` (a no-op when it already is)."""
    try:
        spark.dataSource.register(SluiceDataSource)
    except AnalysisException as exc:
        if exc.getCondition() != "DATA_SOURCE_ALREADY_EXISTS":  # shared by sibling sessions
            raise


class OffsetRange(InputPartition):
    """One Spark input partition: ``topic-partition`` offsets ``[start, end)``."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end


class SluiceDataSource(DataSource):
    """``format("sluice")``: the log's records with Spark's Kafka-source schema."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return spark_ddl(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return SluiceBatchReader(SourceOptions.parse(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return SluiceStreamReader(SourceOptions.parse(self.options, streaming=True))


def _ranges(start: PartitionOffsets, end: PartitionOffsets) -> list[OffsetRange]:
    ranges = []
    for topic in sorted(end):
        for partition, stop in sorted(end[topic].items()):
            begin = start.get(topic, {}).get(partition, stop)
            if begin < stop:
                ranges.append(OffsetRange(topic, partition, begin, stop))
    return ranges


def _nested(offsets: dict[TopicPartition, int]) -> PartitionOffsets:
    out: PartitionOffsets = {}
    for tp, offset in offsets.items():
        out.setdefault(tp.topic, {})[tp.partition] = offset
    return out


def _read(options: SourceOptions, part: OffsetRange) -> Iterator[pa.RecordBatch]:
    yield from read_range(
        options.bootstrap,
        part.topic,
        part.partition,
        part.start,
        part.end,
        options.include_headers,
        DataLoss(options.fail_on_data_loss),
    )


class SluiceBatchReader(DataSourceReader):
    """``spark.read``: from startingOffsets up to endingOffsets, resolved once when planned."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        meta = LogMetadata(self.options)
        try:
            tps = meta.partitions()
            loss = DataLoss(self.options.fail_on_data_loss)
            start = meta.resolve(self.options.starting, tps, loss)
            end = meta.resolve(self.options.ending, tps)
        finally:
            meta.close()
        ranges = _ranges(start, end)
        # Spark wants at least one partition: an empty range reads nothing.
        return ranges or [OffsetRange("", 0, 0, 0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRange)
        yield from _read(self.options, partition)


class SluiceStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream``: micro-batches of offset ranges, offsets in the checkpoint."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._meta: LogMetadata | None = None
        self._target: PartitionOffsets | None = None  # availableNow: stop here

    def __getstate__(self) -> dict[str, Any]:  # executors get the options, not the clients
        return {"options": self.options, "_meta": None, "_target": None}

    # -- driver side -----------------------------------------------------------------

    def initialOffset(self) -> dict:
        meta = self._metadata()
        return to_checkpoint(meta.resolve(self.options.starting, meta.partitions(), self._loss()))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        meta = self._metadata()
        begin = from_checkpoint(start)
        current = meta.partitions(existing_only=True)
        self._drop_gone(begin, set(current))
        earliest, now = meta.bounds(current)
        if self._target is None:
            latest = _nested(now)
        else:  # availableNow: the target, less partitions gone since
            latest = {
                t: {p: o for p, o in parts.items() if TopicPartition(t, p) in now}
                for t, parts in self._target.items()
            }
        # Deleted records do not count against the read limit: partitions count from their
        # earliest. A partition new since ``start`` is read from its beginning; when that is
        # no longer offset 0, its first records were lost (both as Spark's Kafka source).
        counted: PartitionOffsets = {t: dict(parts) for t, parts in begin.items()}
        loss = self._loss()
        for tp, first in earliest.items():
            known = counted.get(tp.topic, {}).get(tp.partition)
            if known is None and tp.partition not in latest.get(tp.topic, {}):
                continue  # new after availableNow's target: for a later query
            if known is None and first > 0:
                loss.records_gone(tp, 0, first)
            counted.setdefault(tp.topic, {})[tp.partition] = max(first, known or 0)
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return to_checkpoint(limit_offsets(counted, latest, max_rows))

    def reportLatestOffset(self) -> dict | None:
        return to_checkpoint(self._latest())

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """The batch's ranges; a start below its partition's earliest offset is lost data."""
        ranges = _ranges(from_checkpoint(start), from_checkpoint(end))
        if not ranges:
            return ranges
        meta = self._metadata()
        tps = [TopicPartition(r.topic, r.partition) for r in ranges]
        present = meta.present(tps)
        earliest, _ = meta.bounds([tp for tp in tps if tp in present])
        loss = self._loss()
        kept = []
        for tp, part in zip(tps, ranges, strict=True):
            if tp not in present:
                loss.partition_gone(tp, part.start)
                continue
            first = earliest[tp]
            if part.start < first:
                loss.records_gone(tp, part.start, first)
                if first >= part.end:
                    continue
                part = OffsetRange(part.topic, part.partition, first, part.end)
            kept.append(part)
        return kept

    def commit(self, end: dict) -> None:
        """Nothing to do: the checkpoint is the only record of progress."""

    def stop(self) -> None:
        if self._meta is not None:
            self._meta.close()
            self._meta = None

    def _metadata(self) -> LogMetadata:
        if self._meta is None:
            self._meta = LogMetadata(self.options)
        return self._meta

    def _loss(self) -> DataLoss:
        return DataLoss(self.options.fail_on_data_loss)

    def _latest(self) -> PartitionOffsets:
        meta = self._metadata()
        _, latest = meta.bounds(meta.partitions(existing_only=True))
        return _nested(latest)

    def _drop_gone(self, offsets: PartitionOffsets, current: set[TopicPartition]) -> None:
        """Report partitions of ``offsets`` that no longer exist; drop them (failOnDataLoss=false).

        ``current``: the selected partitions that exist. One the options no
        longer select but that exists (the query restarted with other topics)
        is carried on unread, as before. Spark's Kafka source treats any
        vanished partition as lost data, even one read to its end: the query
        cannot know that nothing more was written before the deletion.
        """
        others = [TopicPartition(t, p) for t, parts in offsets.items() for p in parts]
        others = [tp for tp in others if tp not in current]
        if not others:
            return
        still = self._metadata().present(others)
        loss = self._loss()
        for tp in others:
            if tp not in still:
                loss.partition_gone(tp, offsets[tp.topic][tp.partition])
                del offsets[tp.topic][tp.partition]
                if not offsets[tp.topic]:
                    del offsets[tp.topic]

    # -- executor side ---------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRange)
        yield from _read(self.options, partition)
