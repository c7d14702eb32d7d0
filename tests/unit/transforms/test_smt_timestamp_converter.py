"""TimestampConverter$Key / $Value and the SimpleDateFormat patterns it reads."""

from __future__ import annotations

import datetime as dt

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, INT64, STRING, Schema, SchemaType, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms._java_date_format import DateFormatError, JavaDateFormat
from transforms._schemas import date_schema, time_schema, timestamp_schema
from transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue

MOMENT = dt.datetime(2024, 3, 5, 14, 7, 9, 123000, tzinfo=dt.UTC)
MOMENT_MS = 1_709_647_629_123


def test_unix_field_to_string_schemaless() -> None:
    check(
        """
        transforms=ts
        transforms.ts.type=org.apache.kafka.connect.transforms.TimestampConverter$Value
        transforms.ts.field=created
        transforms.ts.target.type=string
        transforms.ts.format=yyyy-MM-dd'T'HH:mm:ss.SSSXXX
        """,
        [rec({"id": 1, "created": MOMENT_MS}), rec({"id": 2})],
        [rec({"id": 1, "created": "2024-03-05T14:07:09.123Z"}), rec({"id": 2})],
    )


@pytest.mark.parametrize(
    ("options", "value", "expected"),
    [
        ("target.type=Timestamp", MOMENT_MS, MOMENT),
        ("target.type=unix", MOMENT, MOMENT_MS),
        ("target.type=unix\nunix.precision=seconds", MOMENT, MOMENT_MS // 1000),
        ("target.type=unix\nunix.precision=microseconds", MOMENT, MOMENT_MS * 1000),
        ("target.type=Timestamp\nunix.precision=nanoseconds", MOMENT_MS * 1_000_000, MOMENT),
        ("target.type=Date", MOMENT, dt.date(2024, 3, 5)),
        ("target.type=Time", MOMENT, dt.time(14, 7, 9, 123000)),
        ("target.type=unix", dt.date(1970, 1, 2), 86_400_000),
        ("target.type=unix", dt.time(0, 0, 1), 1000),
        (
            "target.type=Timestamp\nformat=dd/MM/yyyy HH:mm",
            "05/03/2024 14:07",
            MOMENT.replace(second=0, microsecond=0),
        ),
        (
            "target.type=Timestamp\nformat=yyyy-MM-dd HH:mmXXX",
            "2024-03-05 16:07+02:00",
            MOMENT.replace(second=0, microsecond=0),
        ),
        ("target.type=string\nformat=EEE, d MMM yyyy h:mm a", MOMENT, "Tue, 5 Mar 2024 2:07 PM"),
    ],
)
def test_whole_value_conversions(options: str, value: object, expected: object) -> None:
    [out] = run(options, [rec(value)], cls=TimestampConverterValue)
    assert out.value == expected


def test_with_schema_logical_types() -> None:
    schema = struct(("id", INT32), ("at", INT64.as_optional()), name="row")
    converted = struct(("id", INT32), ("at", timestamp_schema(optional=True)), name="row")
    check(
        "field=at\ntarget.type=Timestamp",
        [
            rec({"id": 1, "at": MOMENT_MS}, value_schema=schema),
            rec({"id": 2, "at": None}, value_schema=schema),
        ],
        [
            rec({"id": 1, "at": MOMENT}, value_schema=converted),
            rec({"id": 2, "at": None}, value_schema=converted),
        ],
        cls=TimestampConverterValue,
    )


def test_with_schema_reads_logical_types_and_raw_logical_ints() -> None:
    check(
        "target.type=string\nformat=yyyy-MM-dd",
        [
            rec(1, key=19787, key_schema=date_schema()),
            rec(1, key=dt.date(2024, 3, 5), key_schema=date_schema()),
        ],
        [rec(1, key="2024-03-05", key_schema=STRING), rec(1, key="2024-03-05", key_schema=STRING)],
        cls=TimestampConverterKey,
    )
    check(
        "target.type=Time",
        [rec(MOMENT_MS, value_schema=INT64)],
        [rec(dt.time(14, 7, 9, 123000), value_schema=time_schema())],
        cls=TimestampConverterValue,
    )


def test_null_field_uses_the_schema_default() -> None:
    schema = struct(("at", Schema(SchemaType.INT64, optional=True, default=0)))
    converted = struct(("at", date_schema(optional=True)))
    check(
        "field=at\ntarget.type=Date",
        [rec({"at": None}, value_schema=schema)],
        [rec({"at": dt.date(1970, 1, 1)}, value_schema=converted)],
        cls=TimestampConverterValue,
    )


@pytest.mark.parametrize(
    ("options", "value", "message"),
    [
        ("target.type=unix", "2024-03-05", "is a string; set format to read it"),
        ("target.type=unix\nformat=yyyy-MM-dd", "05/03/2024", "does not match the pattern"),
        ("target.type=unix\nformat=yyyy-MM-dd", "2024-02-30", "is not a valid date"),
        ("target.type=unix", 1.5, "cannot read a timestamp from a float"),
    ],
)
def test_data_errors(options: str, value: object, message: str) -> None:
    with pytest.raises(DataError, match=message):
        run(options, [rec(value)], cls=TimestampConverterValue)


def test_an_int32_schema_is_not_a_unix_time() -> None:
    with pytest.raises(DataError, match="schema type int32 is not a unix time"):
        run(
            "target.type=string\nformat=yyyy",
            [rec(5, value_schema=INT32)],
            cls=TimestampConverterValue,
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "target.type: is required"),
        ("target.type=date", "target.type: Input should be"),
        ("target.type=string", "target.type string needs format"),
        ("target.type=unix\nformat=YYYY-MM", "format: pattern letter 'Y' is not supported"),
        ("target.type=unix\nunix.precision=hours", "unix.precision: Input should be"),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=TimestampConverterValue)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyyMMdd", "20240305"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2024-03-05T14:07:09.123+0000"),
        ("EEEE, MMMM d, yy", "Tuesday, March 5, 24"),
        ("'day' D 'of' yyyy, kk:mm", "day 65 of 2024, 14:07"),
        ("hh 'o''clock' a", "02 o'clock PM"),
        ("yyyy-MM-dd HH:mm:ss.SSS z", "2024-03-05 14:07:09.123 UTC"),
    ],
)
def test_patterns_round_trip(pattern: str, text: str) -> None:
    fmt = JavaDateFormat(pattern)
    assert fmt.format(fmt.parse(text)) == text


def test_formatting_writes_utc() -> None:
    oslo = dt.timezone(dt.timedelta(hours=1))
    assert (
        JavaDateFormat("HH:mm X").format(dt.datetime(2024, 1, 1, 12, 0, tzinfo=oslo)) == "11:00 Z"
    )


@pytest.mark.parametrize(
    ("pattern", "message"), [("YYYY", "week year"), ("'open", "unterminated quote"), ("w", "'w'")]
)
def test_unsupported_patterns(pattern: str, message: str) -> None:
    with pytest.raises(DateFormatError, match=message):
        JavaDateFormat(pattern)
