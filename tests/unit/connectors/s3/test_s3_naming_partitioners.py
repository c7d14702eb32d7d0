"""Object names, Joda path formats and partitioners: pure functions, no server."""

from __future__ import annotations

import datetime as dt
import sys

import pytest

from connectors.api import ConfigError, DataError, SinkRecord
from connectors.s3.config import S3SinkConfig
from connectors.s3.joda import compile_pattern
from connectors.s3.naming import object_key, parse_key

BASE = {"s3.bucket.name": "bucket", "topics": "orders"}
# 2024-03-07 09:15:30.250 UTC
TS = int(dt.datetime(2024, 3, 7, 9, 15, 30, 250000, tzinfo=dt.UTC).timestamp() * 1000)


def record(value: object = None, offset: int = 5, timestamp: int | None = TS) -> SinkRecord:
    return SinkRecord(
        topic="orders", partition=2, kafka_offset=offset, value=value, timestamp=timestamp
    )


def test_object_keys_follow_confluents_layout_and_parse_back() -> None:
    key = object_key("topics", "my.orders", "partition=2", 2, 1000, "json")
    assert key == "topics/my.orders/partition=2/my.orders+2+0000001000.json"
    name = parse_key(key)
    assert name is not None
    assert (name.topic, name.partition, name.start_offset, name.extension) == (
        "my.orders",
        2,
        1000,
        "json",
    )
    assert parse_key("topics/x/partition=0/x+0+0000000001.snappy.parquet").extension == (  # type: ignore[union-attr]
        "snappy.parquet"
    )
    assert parse_key("topics/x/notes.txt") is None


def test_joda_patterns_format_quoted_text_and_fields() -> None:
    moment = dt.datetime(2024, 3, 7, 9, 5, 3, 42000)
    fmt = compile_pattern("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/mm-ss.SSS/MMM/EEE/yy/D")
    assert fmt(moment) == "year=2024/month=03/day=07/hour=09/05-03.042/Mar/Thu/24/67"
    assert compile_pattern("'it''s'")(moment) == "it's"
    with pytest.raises(ValueError, match="not supported"):
        compile_pattern("YYYY-ww")


def test_default_partitioner_is_partition_equals_n() -> None:
    partitioner = S3SinkConfig.from_props(BASE).build_partitioner()
    assert partitioner.encode(record({"a": 1})) == "partition=2"
    assert partitioner.deterministic


def test_field_partitioner_uses_value_fields_and_names_a_missing_one() -> None:
    config = S3SinkConfig.from_props(
        {
            **BASE,
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "country, vip",
        }
    )
    partitioner = config.build_partitioner()
    assert partitioner.encode(record({"country": "fr", "vip": True})) == "country=fr/vip=true"
    with pytest.raises(DataError, match="no field 'vip'"):
        partitioner.encode(record({"country": "fr"}))
    with pytest.raises(DataError, match="FieldPartitioner takes int, string or boolean"):
        partitioner.encode(record({"country": 1.5, "vip": False}))


def test_time_based_partitioner_floors_record_time_in_the_time_zone() -> None:
    props = {
        **BASE,
        "partitioner.class": "TimeBasedPartitioner",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
        "partition.duration.ms": "3600000",
        "timestamp.extractor": "Record",
        "locale": "en-US",
    }
    utc = S3SinkConfig.from_props({**props, "timezone": "UTC"}).build_partitioner()
    assert utc.encode(record({})) == "year=2024/month=03/day=07/hour=09"
    assert utc.deterministic
    tokyo = S3SinkConfig.from_props({**props, "timezone": "Asia/Tokyo"}).build_partitioner()
    assert tokyo.encode(record({})) == "year=2024/month=03/day=07/hour=18"
    with pytest.raises(DataError, match="no timestamp"):
        utc.encode(record({}, timestamp=None))


def test_record_field_extractor_reads_millis_or_iso_text() -> None:
    partitioner = S3SinkConfig.from_props(
        {
            **BASE,
            "partitioner.class": "DailyPartitioner",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "at",
        }
    ).build_partitioner()
    assert partitioner.encode(record({"at": TS})) == "year=2024/month=03/day=07"
    assert partitioner.encode(record({"at": "2023-12-31T23:59:59+00:00"})) == (
        "year=2023/month=12/day=31"
    )
    with pytest.raises(DataError, match="not epoch milliseconds"):
        partitioner.encode(record({"at": "yesterday"}))


def test_wallclock_partitioning_is_marked_not_deterministic() -> None:
    partitioner = S3SinkConfig.from_props(
        {**BASE, "partitioner.class": "HourlyPartitioner"}
    ).build_partitioner()
    assert not partitioner.deterministic


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"partitioner.class": "FieldPartitioner"}, "partition.field.name"),
        ({"partitioner.class": "TimeBased", "partition.duration.ms": "1"}, "path.format"),
        ({"partitioner.class": "Nope"}, "partitioner.class: .*unknown partitioner"),
        ({"format.class": "avro"}, "format.class: .*unknown format 'avro'"),
        ({"s3.part.size": "1024"}, "s3.part.size"),
        ({"behavior.on.null.values": "drop"}, "behavior.on.null.values"),
        ({"timezone": "Mars/Olympus"}, "timezone: .*unknown time zone"),
    ],
)
def test_bad_sink_configs_name_the_key(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        S3SinkConfig.from_props({**BASE, **props})


def test_confluent_format_class_names_are_aliases() -> None:
    for name, short in [
        ("io.confluent.connect.s3.format.json.JsonFormat", "json"),
        ("io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "bytearray"),
        ("io.confluent.connect.s3.format.parquet.ParquetFormat", "parquet"),
    ]:
        assert S3SinkConfig.from_props({**BASE, "format.class": name}).format_class == short


def test_parquet_without_pyarrow_is_a_config_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if pyarrow were not installed
    with pytest.raises(ConfigError, match=r"format.class: .*needs pyarrow.*sluice\[parquet\]"):
        S3SinkConfig.from_props({**BASE, "format.class": "ParquetFormat"})
    assert S3SinkConfig.from_props({**BASE, "format.class": "json"}).format_class == "json"
