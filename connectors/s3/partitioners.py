"""Partitioners: the ``<encoded partition>`` path of each record's object, as Confluent's.

- DefaultPartitioner: ``partition=<kafka partition>``.
- FieldPartitioner: ``<field>=<value>[/<field>=<value>...]`` from the value's
  fields named in ``partition.field.name`` (struct values; int, str, bool fields).
- TimeBasedPartitioner: the record's time (``timestamp.extractor``: Record =
  the record's timestamp, RecordField = ``timestamp.field`` of the value,
  Wallclock = now) floored to ``partition.duration.ms`` in ``timezone`` and
  formatted with ``path.format`` (Joda pattern). DailyPartitioner and
  HourlyPartitioner are TimeBased with the path and duration fixed.

Exactly-once needs the same records to land in the same objects after a
restart: every partitioner is deterministic except the Wallclock extractor.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from connectors.api import DataError, SinkRecord
from connectors.s3.joda import compile_pattern

STORAGE = "io.confluent.connect.storage.partitioner."
PARTITIONER_ALIASES: dict[str, str] = {
    "default": "default",
    "field": "field",
    "time": "time",
    "timebased": "time",
    "daily": "daily",
    "hourly": "hourly",
}
for _short, _name in (
    ("default", "DefaultPartitioner"),
    ("field", "FieldPartitioner"),
    ("time", "TimeBasedPartitioner"),
    ("daily", "DailyPartitioner"),
    ("hourly", "HourlyPartitioner"),
):
    PARTITIONER_ALIASES[_name.lower()] = _short
    PARTITIONER_ALIASES[(STORAGE + _name).lower()] = _short

DAILY_PATH = "'year'=YYYY/'month'=MM/'day'=dd"
HOURLY_PATH = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
EXTRACTORS = {"wallclock": "Wallclock", "record": "Record", "recordfield": "RecordField"}


def canonical_partitioner(name: str) -> str:
    short = PARTITIONER_ALIASES.get(name.strip().lower())
    if short is None:
        raise ValueError(
            f"unknown partitioner {name!r}; use DefaultPartitioner, FieldPartitioner, "
            "TimeBasedPartitioner, DailyPartitioner or HourlyPartitioner"
        )
    return short


def canonical_extractor(name: str) -> str:
    short = name.strip().lower()
    if short.startswith(STORAGE.lower()):
        short = short[len(STORAGE) :]
    short = short.removesuffix("timestampextractor")
    if short not in EXTRACTORS:
        known = "Wallclock, Record, RecordField"
        raise ValueError(f"unknown timestamp extractor {name!r}; use {known}")
    return EXTRACTORS[short]


class Partitioner(Protocol):
    """Maps a record to its encoded partition path and, for rotation, its time."""

    deterministic: bool
    #: The encoded partition depends on the Kafka partition only (a run of it shares one).
    per_kafka_partition: bool

    def encode(self, record: SinkRecord) -> str: ...

    def timestamp_ms(self, record: SinkRecord) -> int | None: ...


def _where(record: SinkRecord) -> str:
    return f"record {record.topic}-{record.partition}@{record.kafka_offset}"


class DefaultPartitioner:
    """``partition=<n>``: one directory per Kafka partition."""

    deterministic = True
    per_kafka_partition = True

    def encode(self, record: SinkRecord) -> str:
        return f"partition={record.partition}"

    def timestamp_ms(self, record: SinkRecord) -> int | None:
        return record.timestamp


def _lookup(value: Any, path: str, record: SinkRecord) -> Any:
    current = value
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            raise DataError(f"{_where(record)}: the value has no field {path!r}")
        current = current[part]
    return current


class FieldPartitioner:
    """``<field>=<value>/...`` from fields of a struct value."""

    deterministic = True
    per_kafka_partition = False

    def __init__(self, fields: list[str]) -> None:
        self.fields = fields

    def encode(self, record: SinkRecord) -> str:
        parts = []
        for name in self.fields:
            value = _lookup(record.value, name, record)
            if isinstance(value, bool):
                text = str(value).lower()
            elif isinstance(value, int | str):
                text = str(value)
            else:
                raise DataError(
                    f"{_where(record)}: field {name!r} is {type(value).__name__}; "
                    "FieldPartitioner takes int, string or boolean fields"
                )
            parts.append(f"{name}={text}")
        return "/".join(parts)

    def timestamp_ms(self, record: SinkRecord) -> int | None:
        return record.timestamp


def _to_ms(value: Any, record: SinkRecord, field: str) -> int:
    if isinstance(value, bool):
        raise DataError(f"{_where(record)}: timestamp field {field!r} is a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(moment.timestamp() * 1000)
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return _to_ms(moment, record, field)
    raise DataError(
        f"{_where(record)}: timestamp field {field!r} is {value!r}, not epoch milliseconds "
        "or an ISO-8601 time"
    )


class TimeBasedPartitioner:
    """Directories by time bucket, formatted with a Joda pattern."""

    per_kafka_partition = False

    def __init__(
        self,
        path_format: str,
        duration_ms: int,
        timezone: str,
        extractor: str,
        timestamp_field: str | None,
        clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    ) -> None:
        self.format = compile_pattern(path_format)
        self.duration_ms = duration_ms
        self.zone = ZoneInfo(timezone)
        self.extractor = extractor
        self.timestamp_field = timestamp_field
        self.deterministic = extractor != "Wallclock"
        self._clock_ms = clock_ms

    def timestamp_ms(self, record: SinkRecord) -> int | None:
        if self.extractor == "Wallclock":
            return self._clock_ms()
        if self.extractor == "RecordField":
            assert self.timestamp_field is not None, "validated by the config"
            field = self.timestamp_field
            return _to_ms(_lookup(record.value, field, record), record, field)
        if record.timestamp is None or record.timestamp < 0:
            raise DataError(f"{_where(record)}: the record has no timestamp (extractor Record)")
        return record.timestamp

    def encode(self, record: SinkRecord) -> str:
        ts = self.timestamp_ms(record)
        assert ts is not None
        utc = dt.datetime.fromtimestamp(ts / 1000, dt.UTC)
        offset = utc.astimezone(self.zone).utcoffset() or dt.timedelta(0)
        local_ms = ts + int(offset.total_seconds() * 1000)
        bucket_ms = local_ms - local_ms % self.duration_ms
        local = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=bucket_ms)
        return self.format(local)
