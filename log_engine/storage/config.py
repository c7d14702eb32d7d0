"""A partition log's settings: Kafka's topic-level configs, declared once.

Every field carries its Kafka topic config name as its alias (``segment.bytes``),
a default equal to Kafka's, a description and its constraints. The broker builds
one :class:`LogConfig` per topic from its ``log.*`` defaults plus the topic's
overrides, all as strings (:meth:`LogConfig.from_properties`).

Deviation from Kafka: ``flush.ms`` defaults to 1000 ms instead of "never". Kafka
leaves durability to replication; a single-node Sluice broker has no replica,
so it fsyncs on a timer (``PartitionLog.maybe_flush``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from log_engine.errors import InvalidConfigError

_DAY_MS = 24 * 60 * 60 * 1000
_LONG_MAX = 2**63 - 1
_INT_MAX = 2**31 - 1

CleanupPolicy = Literal["delete", "compact", "compact,delete"]
TimestampTypeName = Literal["CreateTime", "LogAppendTime"]
CompressionTypeName = Literal["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"]


class LogConfig(BaseModel):
    """Settings of one partition log (Kafka's topic configs, aliased by their dotted names).

    Immutable: a config change builds a new instance and hands it to
    ``PartitionLog.update_config``. Python names put the unit last.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True
    )

    segment_bytes: int = Field(
        1 << 30,
        alias="segment.bytes",
        ge=14,
        le=_INT_MAX,
        description="Roll to a new segment once the active one would grow past this size.",
    )
    segment_ms: int = Field(
        7 * _DAY_MS,
        alias="segment.ms",
        ge=1,
        description="Roll the active segment once its first batch is this old, even if small.",
    )
    segment_index_bytes: int = Field(
        10 * 1024 * 1024,
        alias="segment.index.bytes",
        ge=4,
        le=_INT_MAX,
        description="Preallocated size of each offset and time index; a full index rolls.",
    )
    index_interval_bytes: int = Field(
        4096,
        alias="index.interval.bytes",
        ge=0,
        le=_INT_MAX,
        description="Add an offset index entry after roughly this many appended bytes.",
    )
    retention_ms: int = Field(
        7 * _DAY_MS,
        alias="retention.ms",
        ge=-1,
        description="Delete closed segments whose newest timestamp is older; -1 keeps forever.",
    )
    retention_bytes: int = Field(
        -1,
        alias="retention.bytes",
        ge=-1,
        description="Delete oldest closed segments while the log is larger; -1 means no limit.",
    )
    cleanup_policy: CleanupPolicy = Field(
        "delete",
        alias="cleanup.policy",
        description="'delete' (retention), 'compact' (keep the newest record per key) or both.",
    )
    delete_retention_ms: int = Field(
        _DAY_MS,
        alias="delete.retention.ms",
        ge=0,
        description="How long compaction keeps tombstones (null values) for consumers to see.",
    )
    min_cleanable_dirty_ratio: float = Field(
        0.5,
        alias="min.cleanable.dirty.ratio",
        ge=0.0,
        le=1.0,
        description="Compact only once this share of the cleanable log is not yet compacted.",
    )
    min_compaction_lag_ms: int = Field(
        0,
        alias="min.compaction.lag.ms",
        ge=0,
        description="Never compact records newer than this (by segment max timestamp).",
    )
    max_message_bytes: int = Field(
        1048588,
        alias="max.message.bytes",
        ge=0,
        le=_INT_MAX,
        description="Largest record batch (header included) a producer may append.",
    )
    message_timestamp_type: TimestampTypeName = Field(
        "CreateTime",
        alias="message.timestamp.type",
        description="CreateTime keeps producer timestamps; LogAppendTime stamps the broker's.",
    )
    flush_messages: int = Field(
        _LONG_MAX,
        alias="flush.messages",
        ge=1,
        description="fsync once this many messages are unflushed.",
    )
    flush_ms: int = Field(
        1000,
        alias="flush.ms",
        ge=0,
        description="fsync unflushed data this often (Sluice default 1000: no replicas).",
    )
    file_delete_delay_ms: int = Field(
        60_000,
        alias="file.delete.delay.ms",
        ge=0,
        description="Keep deleted segment files (renamed .deleted) this long before unlinking.",
    )
    compression_type: CompressionTypeName = Field(
        "producer",
        alias="compression.type",
        description="Final compression; only 'producer' (store batches as sent) is applied.",
    )
    min_insync_replicas: int = Field(
        1,
        alias="min.insync.replicas",
        ge=1,
        description="Replicas that must acknowledge an acks=all produce (used by the broker).",
    )

    @field_validator("cleanup_policy", mode="before")
    @classmethod
    def _normalize_policy(cls, value: Any) -> Any:
        """Accept Kafka's list syntax in any order ('delete,compact', '[compact]')."""
        if not isinstance(value, str):
            return value
        parts = {p.strip() for p in value.strip().strip("[]").split(",") if p.strip()}
        return ",".join(sorted(parts))

    @property
    def compact(self) -> bool:
        """The cleaner compacts this log."""
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        """Retention deletes old segments of this log."""
        return "delete" in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        """The broker stamps batches with its own clock on append."""
        return self.message_timestamp_type == "LogAppendTime"

    @classmethod
    def keys(cls) -> frozenset[str]:
        """Every Kafka topic config name this model understands."""
        return frozenset(f.alias for f in cls.model_fields.values() if f.alias)

    @classmethod
    def from_properties(cls, properties: dict[str, str]) -> LogConfig:
        """Parse Kafka-named string values; unknown keys or bad values raise InvalidConfigError."""
        unknown = sorted(set(properties) - cls.keys())
        if unknown:
            raise InvalidConfigError(f"unknown topic config(s): {', '.join(unknown)}")
        values = {key: value.strip() for key, value in properties.items()}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise InvalidConfigError(_describe(exc, properties)) from None

    def to_properties(self) -> dict[str, str]:
        """This config as Kafka-named strings (the inverse of :meth:`from_properties`)."""
        return {key: str(value) for key, value in self.model_dump(by_alias=True).items()}

    def with_overrides(self, overrides: dict[str, str]) -> LogConfig:
        """A copy with some Kafka-named settings replaced (validated like from_properties)."""
        if not overrides:
            return self
        return LogConfig.from_properties({**self.to_properties(), **overrides})


def _describe(exc: ValidationError, properties: dict[str, str]) -> str:
    problems = []
    for error in exc.errors():
        key = ".".join(str(part) for part in error["loc"])
        shown = properties.get(key, error.get("input"))
        problems.append(f"{key}={shown!r}: {error['msg']}")
    return "invalid topic config: " + "; ".join(problems)
