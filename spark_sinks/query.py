"""Builds a SparkSink task's Structured Streaming query from its config.

::

    readStream.format("sluice") (topics, earliest, maxOffsetsPerTrigger, failOnDataLoss)
        -> parse values (value.format: json with value.schema or an inferred schema; raw)
        -> view `records` -> spark.sql (optional)
        -> writeStream: parquet/json/csv/orc to output.path (partitioned), or jdbc per batch
           checkpoint.location, trigger.interval.ms or availableNow

The ``records`` view has the value's columns (json) or ``key``/``value`` as
text (raw), plus ``_topic``, ``_partition``, ``_offset`` and ``_timestamp``.
Mistakes found while building (a bad DDL, SQL that does not parse or names an
unknown column) raise ConfigError naming the key. File output is exactly-once
(the checkpoint and the file sink's own log agree on each micro-batch); jdbc
output appends each micro-batch, so a batch replayed after a crash is written again.

Imports pyspark: only for a task that starts.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from connectors.api import ConfigError
from spark_sinks.log_access import LogMetadata
from spark_sinks.options import SourceOptions
from spark_sinks.sink_config import SparkSinkConfig
from spark_sinks.source import FORMAT

VIEW = "records"
#: The record's place in the log, as columns of `records`.
METADATA = {
    "topic": "_topic",
    "partition": "_partition",
    "offset": "_offset",
    "timestamp": "_timestamp",
}
JDBC_DRIVER = "org.postgresql.Driver"
_VIEW_LOCK = threading.Lock()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _metadata() -> list[Column]:
    return [F.col(name).alias(alias) for name, alias in METADATA.items()]


def source_options(config: SparkSinkConfig) -> dict[str, str]:
    options = {
        "bootstrap.servers": config.bootstrap_servers,
        "failOnDataLoss": "true" if config.fail_on_data_loss else "false",
    }
    if config.topics.strip():
        options["subscribe"] = config.topics
    else:
        options["subscribePattern"] = config.topics_regex
    return options


def value_schema(spark: SparkSession, config: SparkSinkConfig) -> StructType:
    """``value.schema`` parsed, or the schema of a sample of the topics' JSON values."""
    if config.value_schema.strip():
        try:
            return spark.createDataFrame([], config.value_schema).schema
        except PySparkException as exc:
            raise ConfigError(
                f"value.schema: not a valid Spark DDL schema: {_first_line(exc)}"
            ) from None
    options = source_options(config)
    ending = sample_end_offsets(options, config.schema_sample_records)
    reader = spark.read.format(FORMAT).options(**options).option("endingOffsets", ending)
    sample = reader.load().selectExpr("CAST(value AS STRING)").limit(config.schema_sample_records)
    values = [row[0] for row in sample.collect() if row[0]]
    if not values:
        raise ConfigError(
            "value.schema: the topics hold no record to infer a schema from; set value.schema"
        )
    schema = spark.read.json(spark.sparkContext.parallelize(values, 1)).schema
    if not schema.fields or schema.fieldNames() == ["_corrupt_record"]:
        raise ConfigError("value.schema: the sampled values are not JSON objects; set value.schema")
    return schema


def sample_end_offsets(options: dict[str, str], per_partition: int) -> str:
    """endingOffsets JSON: at most ``per_partition`` records from each partition's start."""
    meta = LogMetadata(SourceOptions.parse(options, streaming=False))
    try:
        partitions = meta.partitions()
        earliest, latest = meta.bounds(partitions)
    finally:
        meta.close()
    ending: dict[str, dict[str, int]] = {}
    for tp in partitions:
        ending.setdefault(tp.topic, {})[str(tp.partition)] = min(
            earliest[tp] + per_partition, latest[tp]
        )
    return json.dumps(ending)


def records(spark: SparkSession, config: SparkSinkConfig) -> DataFrame:
    """The streaming frame behind the ``records`` view (see the module doc)."""
    reader = spark.readStream.format(FORMAT).options(**source_options(config))
    reader = reader.option("startingOffsets", config.starting_offsets)
    if config.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(config.max_offsets_per_trigger))
    raw = reader.load()
    if config.value_format == "raw":
        return raw.select(
            F.col("key").cast("string").alias("key"),
            F.col("value").cast("string").alias("value"),
            *_metadata(),
        )
    schema = value_schema(spark, config)
    parsed = F.from_json(F.col("value").cast("string"), schema).alias("v")
    return raw.select(parsed, *_metadata()).select("v.*", *METADATA.values())


def transformed(spark: SparkSession, config: SparkSinkConfig) -> DataFrame:
    frame = records(spark, config)
    if not config.sql.strip():
        return frame
    # The view is the session's, shared by the worker's tasks: define and analyse at once
    # (the analysed plan no longer refers to the view, so the next task may replace it).
    with _VIEW_LOCK:
        frame.createOrReplaceTempView(VIEW)
        try:
            return spark.sql(config.sql)
        except PySparkException as exc:
            raise ConfigError(f"spark.sql: {_first_line(exc)}") from None
        finally:
            spark.catalog.dropTempView(VIEW)


class JdbcBatchWriter:
    """foreachBatch: append each micro-batch to a table through the PostgreSQL JDBC driver."""

    def __init__(self, config: SparkSinkConfig) -> None:
        self._url = config.jdbc_url
        self._table = config.jdbc_table
        self._properties = {"driver": JDBC_DRIVER}
        if config.jdbc_user:
            self._properties["user"] = config.jdbc_user
        password = config.jdbc_password.get_secret_value()
        if password:
            self._properties["password"] = password

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.jdbc(self._url, self._table, mode="append", properties=self._properties)


def start_query(spark: SparkSession, config: SparkSinkConfig, name: str) -> StreamingQuery:
    """Define and start the query (ConfigError for mistakes found before it runs)."""
    frame = transformed(spark, config)
    writer: Any = frame.writeStream.queryName(name)
    writer = writer.option("checkpointLocation", config.checkpoint_location)
    if config.output_format == "jdbc":
        writer = writer.foreachBatch(JdbcBatchWriter(config))
    else:
        writer = writer.format(config.output_format).option("path", config.output_path)
        columns = config.partition_columns()
        if columns:
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise ConfigError(
                    f"output.partition.by: no column {', '.join(missing)} "
                    f"(columns: {', '.join(frame.columns)})"
                )
            writer = writer.partitionBy(*columns)
    if config.trigger_available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{config.trigger_interval_ms} milliseconds")
    return writer.start()
