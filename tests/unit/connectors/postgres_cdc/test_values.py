"""Text values of PostgreSQL types -> Debezium's Connect data and schemas."""

from __future__ import annotations

from decimal import Decimal

import pytest

from connectors.api import DataError, SchemaType
from connectors.postgres_cdc.values import column_type, parse_array


def parse(oid: int, text: str, typmod: int = -1, mode: str = "precise") -> object:
    return column_type(oid, typmod, mode)[1](text)


def test_integers_floats_booleans_text() -> None:
    assert column_type(21, -1)[0].type is SchemaType.INT16
    assert column_type(23, -1)[0].type is SchemaType.INT32
    assert column_type(20, -1)[0].type is SchemaType.INT64
    assert parse(20, "-9223372036854775808") == -(1 << 63)
    assert parse(700, "1.5") == 1.5 and column_type(700, -1)[0].type is SchemaType.FLOAT32
    assert parse(701, "NaN") != parse(701, "NaN")  # NaN
    assert parse(16, "t") is True and parse(16, "false") is False
    assert parse(25, "hé") == "hé" and parse(1043, "x") == "x"
    assert column_type(12345, -1)[0].type is SchemaType.STRING  # unknown types: text


def test_temporal_types() -> None:
    assert parse(1114, "1970-01-01 00:00:01.000002") == 1_000_002
    assert parse(1114, "1969-12-31 23:59:59") == -1_000_000
    assert parse(1184, "2024-03-01 10:34:56.5+00") == "2024-03-01T10:34:56.500000Z"
    assert parse(1184, "2024-03-01 12:34:56+02") == "2024-03-01T10:34:56.000000Z"
    assert parse(1082, "1970-01-02") == 1 and parse(1082, "1969-12-31") == -1
    assert parse(1083, "01:02:03.25") == 3_723_250_000
    assert parse(1083, "24:00:00") == 86_400_000_000
    assert parse(1266, "10:00:00+02") == "08:00:00Z"
    names = {oid: column_type(oid, -1)[0].name for oid in (1114, 1184, 1082, 1083, 2950, 3802)}
    assert names == {
        1114: "io.debezium.time.MicroTimestamp", 1184: "io.debezium.time.ZonedTimestamp",
        1082: "io.debezium.time.Date", 1083: "io.debezium.time.MicroTime",
        2950: "io.debezium.data.Uuid", 3802: "io.debezium.data.Json",
    }


def test_zoned_timestamps_as_debezium_3_formats_them() -> None:
    """The fraction has the declared precision's digits (6 undeclared), none for p=0."""
    text = "2024-01-01 10:00:15.63872+00"
    assert parse(1184, text) == "2024-01-01T10:00:15.638720Z"
    assert parse(1184, "2024-01-01 10:00:15+00") == "2024-01-01T10:00:15.000000Z"
    assert parse(1184, "2024-01-01 10:00:15.5+00", 3) == "2024-01-01T10:00:15.500Z"
    assert parse(1184, "2024-01-01 10:00:15+00", 1) == "2024-01-01T10:00:15.0Z"
    assert parse(1184, "2024-01-01 10:00:15+00", 0) == "2024-01-01T10:00:15Z"
    assert parse(1184, "2024-01-01 10:00:15.5+05:30") == "2024-01-01T04:30:15.500000Z"
    assert parse(1184, "0001-01-01 01:00:00+02") == "0000-12-31T23:00:00.000000Z"  # 1 BC
    assert parse(1184, "0002-01-01 00:00:00+00 BC") == "-0001-01-01T00:00:00.000000Z"
    assert parse(1184, "294247-01-01 23:59:59.999999+00") == "+294247-01-01T23:59:59.999999Z"
    assert parse(1184, "-infinity") == "-infinity"
    assert parse(1185, '{"2024-01-01 10:00:15.5+00",NULL}', 2) == [
        "2024-01-01T10:00:15.50Z", None]
    with pytest.raises(DataError, match="not a timestamptz"):
        parse(1184, "yesterday")


def test_numeric_modes() -> None:
    typmod = ((10 << 16) | 2) + 4  # numeric(10, 2)
    schema, parser = column_type(1700, typmod)
    assert schema.name == "org.apache.kafka.connect.data.Decimal"
    assert schema.parameters == {"scale": "2", "connect.decimal.precision": "10"}
    assert parser("12.50") == Decimal("12.50") and parser("NaN") is None
    variable = parse(1700, "-1.05")
    assert variable == {"scale": 2, "value": b"\x97"}  # -105, minimal two's complement
    assert parse(1700, "-1.28")["value"] == b"\x80"
    assert parse(1700, "1.28")["value"] == b"\x00\x80"
    assert parse(1700, "1.5", typmod, "double") == 1.5
    assert parse(1700, "1.50", typmod, "string") == "1.50"
    with pytest.raises(DataError, match="not a numeric"):
        parse(1700, "abc", typmod)


def test_bytea_and_arrays() -> None:
    assert parse(17, "\\x00ff") == b"\x00\xff"
    with pytest.raises(DataError, match="hex"):
        parse(17, "abc")
    assert parse(1007, "{1,NULL,3}") == [1, None, 3]
    assert parse(1009, '{"a,b","say \\"hi\\"",NULL,"NULL",plain}') == [
        "a,b", 'say "hi"', None, "NULL", "plain"]
    assert parse(1009, "{}") == []
    assert parse_array("[0:1]={x,y}") == ["x", "y"]
    schema = column_type(1016, -1)[0]
    assert schema.type is SchemaType.ARRAY and schema.value_schema.type is SchemaType.INT64
    assert schema.value_schema.optional


def test_intervals_as_debeziums_micro_duration() -> None:
    schema = column_type(1186, -1)[0]
    assert (schema.type, schema.name) == (SchemaType.INT64, "io.debezium.time.MicroDuration")
    assert parse(1186, "PT1M") == 60_000_000 and parse(1186, "PT0S") == 0
    assert parse(1186, "P1M") == int(30.4375 * 86_400_000_000)  # an average month
    assert parse(1186, "P1DT-1H-0.5S") == 86_400_000_000 - 3_600_500_000
    with pytest.raises(DataError, match="ISO-8601"):
        parse(1186, "1 day")
