"""The S3 sink's keys (Confluent's names): rotation, part size, nulls and partitioning."""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, field_validator, model_validator

from connectors.s3.config import S3ConnectionConfig
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

NULL_BEHAVIOURS = ("fail", "ignore", "write")


class S3SinkConfig(S3ConnectionConfig):
    """Everything the S3 sink reads from its properties."""

    flush_size: int = Field(
        1000,
        alias="flush.size",
        ge=1,
        description="Records per object (per Kafka partition): an object is written when reached.",
        json_schema_extra={"importance": "HIGH", "width": "SHORT"},
    )
    rotate_interval_ms: int = Field(
        -1,
        alias="rotate.interval.ms",
        ge=-1,
        description=(
            "Write the open objects when a record's time is this far past the first one's "
            "(record time: deterministic, keeps exactly-once); -1 off."
        ),
        json_schema_extra={"importance": "HIGH", "width": "SHORT"},
    )
    rotate_schedule_interval_ms: int = Field(
        -1,
        alias="rotate.schedule.interval.ms",
        ge=-1,
        description=(
            "Write objects open longer than this on the wall clock; -1 off. Object boundaries "
            "then depend on timing, so a restart may write records again: at-least-once."
        ),
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    s3_part_size: int = Field(
        25 * 1024 * 1024,
        alias="s3.part.size",
        ge=MIN_PART_SIZE,
        le=5 * 1024**3,
        description="Objects larger than this are uploaded in parts of this size (min 5 MiB).",
        json_schema_extra={"importance": "HIGH", "width": "SHORT"},
    )
    behavior_on_null_values: str = Field(
        "fail",
        alias="behavior.on.null.values",
        description=(
            "Null values (tombstones): fail (a data error), ignore (skip), or write "
            "(JSON null / an empty line for bytearray)."
        ),
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    bytearray_separator: str = Field(
        "\\n",
        alias="format.bytearray.separator",
        description="Separator after each value in bytearray objects (escapes like \\n allowed).",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    partitioner_class: str = Field(
        "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        alias="partitioner.class",
        validate_default=True,
        description=(
            "DefaultPartitioner (partition=<n>), FieldPartitioner, TimeBasedPartitioner, "
            "DailyPartitioner or HourlyPartitioner (Confluent's class names or short names)."
        ),
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
    )
    partition_field_name: list[str] = Field(
        default_factory=list,
        alias="partition.field.name",
        description="FieldPartitioner: comma-separated value fields making the path.",
        json_schema_extra={"importance": "MEDIUM", "width": "LONG"},
    )
    path_format: str = Field(
        "",
        alias="path.format",
        description="TimeBasedPartitioner: Joda pattern, e.g. 'year'=YYYY/'month'=MM/'day'=dd.",
        json_schema_extra={"importance": "MEDIUM", "width": "LONG"},
    )
    partition_duration_ms: int = Field(
        -1,
        alias="partition.duration.ms",
        ge=-1,
        description="TimeBasedPartitioner: the length of one time bucket.",
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    locale: str = Field(
        "en",
        alias="locale",
        description="Locale of path.format (names are English whatever it says).",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    timezone: str = Field(
        "UTC",
        alias="timezone",
        description="Time zone of path.format buckets (an IANA name, e.g. Europe/Paris).",
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    timestamp_extractor: str = Field(
        "Wallclock",
        alias="timestamp.extractor",
        description=(
            "Time of a record for time-based paths: Record (its timestamp), RecordField "
            "(timestamp.field of the value) or Wallclock (now; not exactly-once)."
        ),
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    timestamp_field: str = Field(
        "timestamp",
        alias="timestamp.field",
        description="RecordField: the value field holding the time (epoch ms or ISO-8601).",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
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
