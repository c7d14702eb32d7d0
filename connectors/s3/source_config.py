"""The S3 source's keys: the mode, what to read, and how often to look for new objects.

``mode=restore`` (also ``RESTORE_BACKUP``, Confluent's name) reads what the S3
sink wrote under ``topics.dir`` back into the same topics and partitions, in
order. ``mode=generic`` (also ``GENERIC``) reads any objects under
``s3.prefix`` into ``topic``, a record per line (``record.unit=line``) or per
object (``record.unit=object``).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, field_validator, model_validator

from connectors.s3.config import S3ConnectionConfig

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
        json_schema_extra={"importance": "HIGH", "width": "SHORT"},
    )
    restore_topics: list[str] = Field(
        default_factory=list,
        alias="restore.topics",
        description="restore: the topics to restore (comma-separated); empty: every topic found.",
        json_schema_extra={"importance": "MEDIUM", "width": "LONG"},
    )
    topic: str = Field(
        "",
        alias="topic",
        description="generic: the topic to write records to.",
        json_schema_extra={"importance": "HIGH", "width": "MEDIUM"},
    )
    s3_prefix: str = Field(
        "",
        alias="s3.prefix",
        description="generic: read the objects whose keys start with this.",
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
    )
    record_unit: str = Field(
        "line",
        alias="record.unit",
        description="generic: line (a record per line, text) or object (one record, bytes).",
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    poll_interval_ms: int = Field(
        5000,
        alias="s3.poll.interval.ms",
        ge=10,
        description="How often to list the bucket again for new objects.",
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    batch_max_records: int = Field(
        1000,
        alias="record.batch.max.size",
        ge=1,
        le=100_000,
        description="Maximum records returned by one poll.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    bytearray_separator: str = Field(
        "\\n",
        alias="format.bytearray.separator",
        description="restore with bytearray: the separator the sink wrote after each value.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
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
