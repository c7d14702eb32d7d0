"""SparkSink's keys, declared once (no pyspark here: validation runs in any worker).

``topics``/``topics.regex`` are every sink's keys; the Spark query reads them
itself through the ``sluice`` data source. ``spark.conf.<key>=<value>`` pass
through to the session (e.g. ``spark.conf.spark.executor.memory=2g``).
``starting.offsets``, ``max.offsets.per.trigger`` and ``fail.on.data.loss`` become
the data source's startingOffsets, maxOffsetsPerTrigger and failOnDataLoss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator

from connectors.api import ConfigError, PluginConfig

FILE_FORMATS = ("parquet", "json", "csv", "orc")
CONF_PREFIX = "spark.conf."


class SparkSinkConfig(PluginConfig):
    """SparkSink's own keys (see the module doc)."""

    topics: str = Field(
        "", alias="topics", description="Topics to read, comma-separated (or topics.regex)."
    )
    topics_regex: str = Field(
        "", alias="topics.regex", description="A regular expression over topic names."
    )
    bootstrap_servers: str = Field(
        "",
        alias="spark.bootstrap.servers",
        description=(
            "The log the query reads; empty (the default): the worker's own cluster (its "
            "embedded broker or its bootstrap.servers). Set it only to read another cluster."
        ),
    )
    master: str = Field(
        "local[*]",
        alias="spark.master",
        description="Spark master URL (local[*], spark://host:7077, ...).",
    )
    sql: str = Field(
        "",
        alias="spark.sql",
        description="Optional SQL over the view `records` (parsed values); its result is written.",
    )
    value_format: Literal["json", "raw"] = Field(
        "json",
        alias="value.format",
        description="json: JSON objects parsed into columns; raw: value and key as text.",
    )
    value_schema: str = Field(
        "",
        alias="value.schema",
        description="Spark DDL of the JSON values (`id INT, name STRING`); empty: inferred.",
    )
    schema_sample_records: int = Field(
        1000,
        alias="value.schema.sample.records",
        ge=1,
        le=1_000_000,
        description="Records read to infer the JSON schema when value.schema is empty.",
    )
    output_format: Literal["parquet", "json", "csv", "orc", "jdbc"] = Field(
        "parquet", alias="output.format", description="parquet, json, csv, orc or jdbc."
    )
    output_path: str = Field(
        "", alias="output.path", description="Directory the files go to (file formats)."
    )
    partition_by: str = Field(
        "",
        alias="output.partition.by",
        description="Columns to partition files by, comma-separated.",
    )
    jdbc_url: str = Field(
        "",
        alias="output.jdbc.url",
        description="jdbc:postgresql://host:port/db (output.format=jdbc).",
    )
    jdbc_table: str = Field(
        "", alias="output.jdbc.table", description="Table rows are appended to."
    )
    jdbc_user: str = Field("", alias="output.jdbc.user", description="Database user.")
    jdbc_password: SecretStr = Field(
        SecretStr(""), alias="output.jdbc.password", description="Database password."
    )
    checkpoint_location: str = Field(
        alias="checkpoint.location",
        min_length=1,
        description="Where the query keeps its offsets and state; reused on restart.",
    )
    trigger_interval_ms: int = Field(
        1000, alias="trigger.interval.ms", ge=0, description="Micro-batch interval."
    )
    trigger_available_now: bool = Field(
        False,
        alias="trigger.available.now",
        description="Process what the topics hold now (in micro-batches) and then stop the query.",
    )
    max_offsets_per_trigger: int | None = Field(
        None, alias="max.offsets.per.trigger", ge=1, description="Records per micro-batch at most."
    )
    starting_offsets: str = Field(
        "earliest",
        alias="starting.offsets",
        description="Where a new query starts: earliest, latest or per-partition JSON.",
    )
    fail_on_data_loss: bool = Field(
        True,
        alias="fail.on.data.loss",
        description=(
            "The data source's failOnDataLoss: true fails the query when records it must read "
            "were deleted (retention, DeleteRecords) or a topic vanished; false logs a warning "
            "and reads on from the earliest offset left."
        ),
    )

    @model_validator(mode="after")
    def _check_combinations(self) -> Self:
        if bool(self.topics.strip()) == bool(self.topics_regex.strip()):
            raise ValueError("topics or topics.regex: set exactly one")
        if self.output_format == "jdbc":
            if not self.jdbc_url or not self.jdbc_table:
                raise ValueError("output.jdbc.url and output.jdbc.table are required for jdbc")
            if not self.jdbc_url.startswith("jdbc:"):
                raise ValueError(f"output.jdbc.url: not a JDBC URL: {self.jdbc_url}")
        elif not self.output_path:
            raise ValueError(f"output.path is required for output.format={self.output_format}")
        return self

    def reading(self, worker_bootstrap_servers: str) -> SparkSinkConfig:
        """This config with the log to read settled: its own, else the worker's."""
        if self.bootstrap_servers.strip():
            return self
        if not worker_bootstrap_servers:
            raise ConfigError(
                "spark.bootstrap.servers: not set, and the runtime did not say which cluster "
                "the worker uses"
            )
        return self.model_copy(update={"bootstrap_servers": worker_bootstrap_servers})

    def partition_columns(self) -> list[str]:
        return [c.strip() for c in self.partition_by.split(",") if c.strip()]

    @staticmethod
    def spark_conf(props: Mapping[str, str]) -> dict[str, str]:
        """``spark.conf.*`` keys, prefix stripped."""
        return {k[len(CONF_PREFIX) :]: v for k, v in props.items() if k.startswith(CONF_PREFIX)}
