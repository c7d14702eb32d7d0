"""The S3 connectors' keys (Confluent's names), declared once: those both sides
share (:class:`S3ConnectionConfig`), the sink's (:class:`S3SinkConfig`:
rotation, part size, nulls and partitioning) and the source's
(:class:`S3SourceConfig`: the mode, what to read, how often to look).

``format.class`` accepts a short name (``json``, ``bytearray``, ``parquet``)
or Confluent's class names (``io.confluent.connect.s3.format.json.JsonFormat``,
``...bytearray.ByteArrayFormat``, ``...parquet.ParquetFormat``); the model
keeps the short name. Parquet needs the optional ``parquet`` extra (pyarrow):
choosing it without pyarrow installed is a config error naming the key.

``mode=restore`` (also ``RESTORE_BACKUP``, Confluent's name) reads what the S3
sink wrote under ``topics.dir`` back into the same topics and partitions, in
order. ``mode=generic`` (also ``GENERIC``) reads any objects under
``s3.prefix`` into ``topic``, a record per line (``record.unit=line``) or per
object (``record.unit=object``).
"""

from __future__ import annotations

import importlib
from typing import Any, Self

from pydantic import Field, SecretStr, field_validator, model_validator

from connectors.api import PluginConfig, key_info
from connectors.s3.joda import compile_pattern
from connectors.s3.partitioners import (
    DAILY_PATH,
    DAY_MS,
    HOUR_MS,
    HOURLY_PATH,
    DefaultPartitioner,
    FieldPartitioner,
    Partitioner,
    TimeBasedPartitioner,
    canonical_extractor,
    canonical_partitioner,
)
from connectors.s3.upload import MIN_PART_SIZE

FORMAT_ALIASES: dict[str, str] = {
    "json": "json",
    "jsonformat": "json",
    "io.confluent.connect.s3.format.json.jsonformat": "json",
    "bytearray": "bytearray",
    "bytes": "bytearray",
    "bytearrayformat": "bytearray",
    "io.confluent.connect.s3.format.bytearray.bytearrayformat": "bytearray",
    "parquet": "parquet",
    "parquetformat": "parquet",
    "io.confluent.connect.s3.format.parquet.parquetformat": "parquet",
}


def canonical_format(name: str) -> str:
    """The short format name for any accepted spelling; ValueError for an unknown one."""
    short = FORMAT_ALIASES.get(name.strip().lower())
    if short is None:
        known = "json, bytearray, parquet (or Confluent's JsonFormat, ByteArrayFormat, ...)"
        raise ValueError(f"unknown format {name!r}; use one of: {known}")
    if short == "parquet":
        try:
            importlib.import_module("pyarrow.parquet")
        except ImportError:
            raise ValueError(
                "ParquetFormat needs pyarrow, which is not installed: "
                "pip install 'sluice[parquet]' (or pip install pyarrow)"
            ) from None
    return short


class S3ConnectionConfig(PluginConfig):
    """Where the objects are (bucket, region, endpoint, credentials, topics.dir), their format."""

    s3_bucket_name: str = Field(
        alias="s3.bucket.name",
        min_length=3,
        max_length=63,
        description="The S3 bucket the objects are written to / read from.",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    s3_region: str = Field(
        "us-east-1",
        alias="s3.region",
        min_length=1,
        description="The AWS region of the bucket.",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    store_url: str | None = Field(
        None,
        alias="store.url",
        description=(
            "A custom S3 endpoint (MinIO, moto, ...), e.g. http://127.0.0.1:9000; "
            "empty for AWS S3. Uses path-style addressing."
        ),
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    aws_access_key_id: SecretStr | None = Field(
        None,
        alias="aws.access.key.id",
        description="Access key id; empty: boto3's credential chain (env, profile, role).",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    aws_secret_access_key: SecretStr | None = Field(
        None,
        alias="aws.secret.access.key",
        description="Secret access key, with aws.access.key.id.",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    topics_dir: str = Field(
        "topics",
        alias="topics.dir",
        description="Top-level prefix of the objects: <topics.dir>/<topic>/<partition path>/.",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    format_class: str = Field(
        "json",
        alias="format.class",
        description=(
            "Object format: json (JSON lines), bytearray (raw bytes, one record per line) or "
            "parquet (needs pyarrow); Confluent's format class names are accepted too."
        ),
        json_schema_extra=key_info("HIGH", "LONG"),
    )

    @field_validator("store_url", mode="before")
    @classmethod
    def _empty_url_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("topics_dir")
    @classmethod
    def _strip_slashes(cls, value: str) -> str:
        stripped = value.strip("/")
        if not stripped:
            raise ValueError("must not be empty")
        return stripped

    @field_validator("format_class")
    @classmethod
    def _known_format(cls, value: str) -> str:
        return canonical_format(value)


NULL_BEHAVIOURS = ("fail", "ignore", "write")


class S3SinkConfig(S3ConnectionConfig):
    """Everything the S3 sink reads from its properties."""

    flush_size: int = Field(
        1000,
        alias="flush.size",
        ge=1,
        description="Records per object (per Kafka partition): an object is written when reached.",
        json_schema_extra=key_info("HIGH", "SHORT"),
    )
    rotate_interval_ms: int = Field(
        -1,
        alias="rotate.interval.ms",
        ge=-1,
        description=(
            "Write the open objects when a record's time is this far past the first one's "
            "(record time: deterministic, keeps exactly-once); -1 off."
        ),
        json_schema_extra=key_info("HIGH", "SHORT"),
    )
    rotate_schedule_interval_ms: int = Field(
        -1,
        alias="rotate.schedule.interval.ms",
        ge=-1,
        description=(
            "Write objects open longer than this on the wall clock; -1 off. Object boundaries "
            "then depend on timing, so a restart may write records again: at-least-once."
        ),
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    s3_part_size: int = Field(
        25 * 1024 * 1024,
        alias="s3.part.size",
        ge=MIN_PART_SIZE,
        le=5 * 1024**3,
        description="Objects larger than this are uploaded in parts of this size (min 5 MiB).",
        json_schema_extra=key_info("HIGH", "SHORT"),
    )
    behavior_on_null_values: str = Field(
        "fail",
        alias="behavior.on.null.values",
        description=(
            "Null values (tombstones): fail (a data error), ignore (skip), or write "
            "(JSON null / an empty line for bytearray)."
        ),
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    bytearray_separator: str = Field(
        "\\n",
        alias="format.bytearray.separator",
        description="Separator after each value in bytearray objects (escapes like \\n allowed).",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    partitioner_class: str = Field(
        "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        alias="partitioner.class",
        validate_default=True,
        description=(
            "DefaultPartitioner (partition=<n>), FieldPartitioner, TimeBasedPartitioner, "
            "DailyPartitioner or HourlyPartitioner (Confluent's class names or short names)."
        ),
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    partition_field_name: list[str] = Field(
        default_factory=list,
        alias="partition.field.name",
        description="FieldPartitioner: comma-separated value fields making the path.",
        json_schema_extra=key_info("MEDIUM", "LONG"),
    )
    path_format: str = Field(
        "",
        alias="path.format",
        description="TimeBasedPartitioner: Joda pattern, e.g. 'year'=YYYY/'month'=MM/'day'=dd.",
        json_schema_extra=key_info("MEDIUM", "LONG"),
    )
    partition_duration_ms: int = Field(
        -1,
        alias="partition.duration.ms",
        ge=-1,
        description="TimeBasedPartitioner: the length of one time bucket.",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    locale: str = Field(
        "en",
        alias="locale",
        description="Locale of path.format (names are English whatever it says).",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    timezone: str = Field(
        "UTC",
        alias="timezone",
        description="Time zone of path.format buckets (an IANA name, e.g. Europe/Paris).",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    timestamp_extractor: str = Field(
        "Wallclock",
        alias="timestamp.extractor",
        description=(
            "Time of a record for time-based paths: Record (its timestamp), RecordField "
            "(timestamp.field of the value) or Wallclock (now; not exactly-once)."
        ),
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    timestamp_field: str = Field(
        "timestamp",
        alias="timestamp.field",
        description="RecordField: the value field holding the time (epoch ms or ISO-8601).",
        json_schema_extra=key_info("LOW", "SHORT"),
    )

    @field_validator("partition_field_name", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("behavior_on_null_values")
    @classmethod
    def _null_behaviour(cls, value: str) -> str:
        if value.strip().lower() not in NULL_BEHAVIOURS:
            raise ValueError(f"must be one of {', '.join(NULL_BEHAVIOURS)}")
        return value.strip().lower()

    @field_validator("partitioner_class")
    @classmethod
    def _partitioner(cls, value: str) -> str:
        return canonical_partitioner(value)

    @field_validator("timestamp_extractor")
    @classmethod
    def _extractor(cls, value: str) -> str:
        return canonical_extractor(value)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}") from None
        return value

    @field_validator("path_format")
    @classmethod
    def _pattern(cls, value: str) -> str:
        compile_pattern(value)
        return value

    @model_validator(mode="after")
    def _partitioner_keys(self) -> Self:
        kind = self.partitioner_class
        if kind == "field" and not self.partition_field_name:
            raise ValueError("partition.field.name: FieldPartitioner needs at least one field")
        if kind == "time":
            if not self.path_format:
                raise ValueError("path.format: TimeBasedPartitioner needs a path format")
            if self.partition_duration_ms <= 0:
                raise ValueError("partition.duration.ms: TimeBasedPartitioner needs a duration")
        return self

    def separator_bytes(self) -> bytes:
        text = self.bytearray_separator.encode("latin-1", "backslashreplace")
        return text.decode("unicode_escape").encode("utf-8")

    def build_partitioner(self) -> Partitioner:
        kind = self.partitioner_class
        if kind == "default":
            return DefaultPartitioner()
        if kind == "field":
            return FieldPartitioner(self.partition_field_name)
        path, duration = self.path_format, self.partition_duration_ms
        if kind == "daily":
            path, duration = DAILY_PATH, DAY_MS
        elif kind == "hourly":
            path, duration = HOURLY_PATH, HOUR_MS
        return TimeBasedPartitioner(
            path, duration, self.timezone, self.timestamp_extractor, self.timestamp_field
        )


MODES = {"restore": "restore", "restore_backup": "restore", "generic": "generic"}
UNITS = ("line", "object")


class S3SourceConfig(S3ConnectionConfig):
    """Everything the S3 source reads from its properties."""

    mode: str = Field(
        "restore",
        alias="mode",
        description=(
            "restore: read back what the S3 sink wrote (same topics, partitions, order); "
            "generic: read any objects under s3.prefix into one topic."
        ),
        json_schema_extra=key_info("HIGH", "SHORT"),
    )
    restore_topics: list[str] = Field(
        default_factory=list,
        alias="restore.topics",
        description="restore: the topics to restore (comma-separated); empty: every topic found.",
        json_schema_extra=key_info("MEDIUM", "LONG"),
    )
    topic: str = Field(
        "",
        alias="topic",
        description="generic: the topic to write records to.",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    s3_prefix: str = Field(
        "",
        alias="s3.prefix",
        description="generic: read the objects whose keys start with this.",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    record_unit: str = Field(
        "line",
        alias="record.unit",
        description="generic: line (a record per line, text) or object (one record, bytes).",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    poll_interval_ms: int = Field(
        5000,
        alias="s3.poll.interval.ms",
        ge=10,
        description="How often to list the bucket again for new objects.",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    batch_max_records: int = Field(
        1000,
        alias="record.batch.max.size",
        ge=1,
        le=100_000,
        description="Maximum records returned by one poll.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    bytearray_separator: str = Field(
        "\\n",
        alias="format.bytearray.separator",
        description="restore with bytearray: the separator the sink wrote after each value.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )

    @field_validator("restore_topics", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        mode = MODES.get(value.strip().lower())
        if mode is None:
            raise ValueError("must be restore (RESTORE_BACKUP) or generic (GENERIC)")
        return mode

    @field_validator("record_unit")
    @classmethod
    def _unit(cls, value: str) -> str:
        if value.strip().lower() not in UNITS:
            raise ValueError("must be line or object")
        return value.strip().lower()

    @model_validator(mode="after")
    def _generic_needs_topic(self) -> Self:
        if self.mode == "generic" and not self.topic:
            raise ValueError("topic: mode=generic needs the topic to write to")
        return self

    def separator_bytes(self) -> bytes:
        text = self.bytearray_separator.encode("latin-1", "backslashreplace")
        return text.decode("unicode_escape").encode("utf-8")
