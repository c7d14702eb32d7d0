"""time.precision.mode and binary.handling.mode: schemas and values per mode."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from connect_worker.converters.json import JsonConverter
from connectors.api import ConfigError, SchemaType, struct
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.tables import Column, Table
from connectors.postgres_cdc.values import column_type
from tests.unit.connectors.postgres_cdc.test_config import BASE

CONNECT = "org.apache.kafka.connect.data."
INT64_MAX = (1 << 63) - 1


def parse(oid: int, text: str, time_mode: str = "adaptive", binary_mode: str = "bytes") -> object:
    return column_type(oid, -1, "precise", time_mode, binary_mode)[1](text)


def schema_of(oid: int, time_mode: str = "adaptive", binary_mode: str = "bytes") -> tuple:
    schema = column_type(oid, -1, "precise", time_mode, binary_mode)[0]
    return schema.type, schema.name, schema.version, schema.parameters


@pytest.mark.parametrize("mode", ["adaptive", "adaptive_time_microseconds"])
def test_adaptive_modes_keep_debeziums_micro_types(mode: str) -> None:
    for oid in (1082, 1083, 1114, 1184, 1266, 1186, 17):
        assert column_type(oid, -1, "precise", mode) == column_type(oid, -1)
    assert schema_of(1083, mode) == (SchemaType.INT64, "io.debezium.time.MicroTime", 1, None)
    assert schema_of(1114, mode)[1] == "io.debezium.time.MicroTimestamp"
    assert parse(1114, "1969-12-31 23:59:59.9995", mode) == -500
    assert parse(1083, "00:00:00.0015", mode) == 1500


def test_connect_mode_schemas_are_kafka_connects_logical_types() -> None:
    assert schema_of(1082, "connect") == (SchemaType.INT32, CONNECT + "Date", 1, None)
    assert schema_of(1083, "connect") == (SchemaType.INT32, CONNECT + "Time", 1, None)
    assert schema_of(1114, "connect") == (SchemaType.INT64, CONNECT + "Timestamp", 1, None)
    # timestamptz, timetz and interval do not change with the mode (as in Debezium)
    for oid in (1184, 1266, 1186):
        assert column_type(oid, -1, "precise", "connect") == column_type(oid, -1)
    array = column_type(1182, -1, "precise", "connect")[0]  # date[]
    assert array.type is SchemaType.ARRAY and array.value_schema.name == CONNECT + "Date"


def test_connect_mode_values_are_python_temporals_truncated_to_ms() -> None:
    assert parse(1082, "2024-03-01", "connect") == dt.date(2024, 3, 1)
    assert parse(1082, "1969-12-31", "connect") == dt.date(1969, 12, 31)
    assert parse(1083, "01:02:03.256789", "connect") == dt.time(1, 2, 3, 256000)
    assert parse(1083, "24:00:00", "connect") == 86_400_000
    assert parse(1114, "2024-03-01 12:34:56.789999", "connect") == dt.datetime(
        2024, 3, 1, 12, 34, 56, 789000, tzinfo=dt.UTC
    )
    before_epoch = parse(1114, "1969-12-31 23:59:59.9995", "connect")
    assert before_epoch == dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC)
    assert parse(1184, "2024-03-01 12:34:56.5+00", "connect") == "2024-03-01T12:34:56.500000Z"
    assert parse(1182, "{2024-03-01,NULL}", "connect") == [dt.date(2024, 3, 1), None]


def test_infinity_keeps_the_adaptive_rule_in_connect_mode() -> None:
    assert parse(1114, "infinity") == INT64_MAX
    assert parse(1114, "infinity", "connect") == INT64_MAX
    assert parse(1114, "-infinity", "connect") == -(1 << 63)
    assert parse(1082, "infinity", "connect") == parse(1082, "infinity") == 2_147_483_647
    assert parse(1082, "-infinity", "connect") == -2_147_483_648


def test_json_converter_writes_connect_mode_as_kafka_connect_does() -> None:
    schema = struct(
        *((name, column_type(oid, -1, "precise", "connect", "base64")[0].as_optional())
          for name, oid in (("d", 1082), ("t", 1083), ("ts", 1114), ("old", 1114), ("b", 17))),
        name="v",
    )
    value = {
        "d": parse(1082, "1969-12-31", "connect"),
        "t": parse(1083, "01:02:03.256789", "connect"),
        "ts": parse(1114, "2024-03-01 12:34:56.789999", "connect"),
        "old": parse(1114, "1969-12-31 23:59:59.9995", "connect"),
        "b": parse(17, "\\x00ff10", "connect", "base64"),
    }
    converter = JsonConverter()
    converter.configure({})
    written = json.loads(converter.from_connect("t", schema, value))
    assert written["payload"] == {
        "d": -1, "t": 3_723_256, "ts": 1_709_296_496_789, "old": -1, "b": "AP8Q",
    }
    fields = {f["field"]: f for f in written["schema"]["fields"]}
    assert fields["ts"] == {"type": "int64", "optional": True, "name": CONNECT + "Timestamp",
                            "version": 1, "field": "ts"}
    assert fields["t"]["type"] == "int32" and fields["t"]["name"] == CONNECT + "Time"
    assert fields["b"] == {"type": "string", "optional": True, "field": "b"}


def test_binary_modes() -> None:
    raw = "\\xfbff00"  # bytes whose base64 differs between the two alphabets
    assert parse(17, raw) == b"\xfb\xff\x00" and schema_of(17)[0] is SchemaType.BYTES
    assert parse(17, raw, binary_mode="base64") == "+/8A"
    assert parse(17, raw, binary_mode="base64-url-safe") == "-_8A"
    assert parse(17, "\\x00ff10ab", binary_mode="hex") == "00ff10ab"
    assert parse(17, "\\xff", binary_mode="base64") == "/w=="  # padded, as Debezium
    assert parse(17, "\\xff", binary_mode="base64-url-safe") == "_w=="
    for mode in ("base64", "base64-url-safe", "hex"):
        assert schema_of(17, binary_mode=mode) == (SchemaType.STRING, None, None, None)
    array = column_type(1001, -1, "precise", "adaptive", "hex")  # bytea[]
    assert array[0].value_schema.type is SchemaType.STRING
    assert array[1]('{"\\\\x01",NULL}') == ["01", None]


def test_table_applies_the_modes_and_connect_zeros_for_key_only_rows() -> None:
    columns = [Column("id", 23, -1, False), Column("d", 1082, -1, False),
               Column("ts", 1114, -1, False), Column("b", 17, -1, False)]
    table = Table("srv", "public", "t", columns, ["id"], "d", "precise",
                  time_mode="connect", binary_mode="hex")
    row = table.row(["1", "2024-03-01", "2024-03-01 00:00:00.0019", "\\x0a"])
    assert row == {"id": 1, "d": dt.date(2024, 3, 1),
                   "ts": dt.datetime(2024, 3, 1, 0, 0, 0, 1000, tzinfo=dt.UTC), "b": "0a"}
    assert table.key_only_row(["2", None, None, None]) == {
        "id": 2, "d": dt.date(1970, 1, 1), "ts": dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        "b": "",
    }


def test_config_defaults_and_bad_modes_name_key_and_allowed_values() -> None:
    config = PostgresCdcConfig.from_props(BASE)
    assert (config.time_precision_mode, config.binary_handling_mode) == ("adaptive", "bytes")
    with pytest.raises(ConfigError, match=r"time\.precision\.mode: .*'adaptive', "
                       r"'adaptive_time_microseconds' or 'connect'"):
        PostgresCdcConfig.from_props({**BASE, "time.precision.mode": "nanoseconds"})
    with pytest.raises(ConfigError, match=r"binary\.handling\.mode: .*'bytes', 'base64', "
                       r"'base64-url-safe' or 'hex'"):
        PostgresCdcConfig.from_props({**BASE, "binary.handling.mode": "base32"})


def test_adaptive_gives_millisecond_types_to_a_precision_of_three_digits_or_fewer() -> None:
    """As Debezium: timestamp(0..3) -> io.debezium.time.Timestamp, time(0..3) -> Time (ms)."""
    schema, parse = column_type(1114, 3)
    assert (schema.type, schema.name) == (SchemaType.INT64, "io.debezium.time.Timestamp")
    assert parse("2024-03-01 12:34:56.789") == 1_709_296_496_789
    assert parse("1969-12-31 23:59:59.999") == -1
    assert parse("infinity") == (1 << 63) - 1
    schema, parse = column_type(1083, 0)
    assert (schema.type, schema.name) == (SchemaType.INT32, "io.debezium.time.Time")
    assert parse("01:02:03") == 3_723_000
    for typmod in (-1, 4, 6):  # no declared precision, or more than ms: microseconds
        assert column_type(1114, typmod)[0].name == "io.debezium.time.MicroTimestamp"
        assert column_type(1083, typmod)[0].name == "io.debezium.time.MicroTime"
    # adaptive_time_microseconds: time always in µs; timestamp as adaptive
    assert column_type(1083, 3, time_mode="adaptive_time_microseconds")[0].name == (
        "io.debezium.time.MicroTime"
    )
    assert column_type(1114, 3, time_mode="adaptive_time_microseconds")[0].name == (
        "io.debezium.time.Timestamp"
    )
