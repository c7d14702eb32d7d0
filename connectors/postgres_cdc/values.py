"""PostgreSQL column types -> Debezium's Connect schemas, and text values -> Connect data.

pgoutput sends column values in PostgreSQL's text output format; the snapshot
reads ``col::text`` so both paths share these parsers. Both connections run
with ``TimeZone=UTC``, ``DateStyle=ISO``, ``IntervalStyle=iso_8601`` and
``extra_float_digits=3`` (see
:mod:`.connections`), which fixes the formats parsed here.

Mapping (Debezium's defaults)::

    int2/int4/int8/oid      int16/int32/int64/int64
    float4/float8           float/double
    numeric(p,s)            org.apache.kafka.connect.data.Decimal bytes (scale, precision
                            parameters; value decimal.Decimal)     decimal.handling.mode=precise
    numeric (no typmod)     io.debezium.data.VariableScaleDecimal struct {scale, value}
                            double / string with decimal.handling.mode=double|string
    bool                    boolean
    text/varchar/char/name  string
    bytea                   bytes (binary.handling.mode=bytes); string with base64 (padded),
                            base64-url-safe (``-``/``_``, padded) or hex (lowercase)
    timestamp               io.debezium.time.MicroTimestamp int64 (µs since the epoch);
                            timestamp(0..3): io.debezium.time.Timestamp int64 (ms)
    timestamptz             io.debezium.time.ZonedTimestamp string (ISO-8601, UTC, ``Z``, a
                            fraction of the declared precision: ``10:00:15.638720Z``)
    date                    io.debezium.time.Date int32 (days since the epoch)
    time                    io.debezium.time.MicroTime int64 (µs since midnight);
                            time(0..3): io.debezium.time.Time int32 (ms), adaptive only
    timetz                  io.debezium.time.ZonedTime string (UTC, ``Z``, fraction without
                            trailing zeros: ``08:00:00Z``, ``08:00:00.5Z``)
    interval                io.debezium.time.MicroDuration int64 (µs; a month is 30.4375 days)
    uuid                    io.debezium.data.Uuid string
    json/jsonb              io.debezium.data.Json string
    <t>[]                   array of <t> (optional elements)
    anything else           string (the text form)

The temporal rows above are time.precision.mode=adaptive: as Debezium, a
column declared with a precision of 0 to 3 digits gets the millisecond type.
adaptive_time_microseconds is the same except that every ``time`` is
MicroTime. With
time.precision.mode=connect, Kafka Connect's own logical types (as the
worker's JsonConverter and the JDBC connectors use them)::

    date                    org.apache.kafka.connect.data.Date int32 (value datetime.date)
    time                    org.apache.kafka.connect.data.Time int32 ms (value datetime.time,
                            truncated to ms)
    timestamp               org.apache.kafka.connect.data.Timestamp int64 ms (value an aware UTC
                            datetime, truncated to ms)
    timestamptz/timetz      unchanged (ZonedTimestamp / ZonedTime strings)
    interval                unchanged (MicroDuration)

``'infinity'``/``'-infinity'`` become the type's largest/smallest integer in
every mode (int64 for timestamps, int32 days for dates), as adaptive always did;
in connect mode that int is the value itself (the JsonConverter writes an int
as is), since no Python date or datetime reaches it. ``24:00:00`` likewise
stays an int (86 400 000 ms). The mode picks a parser per column once: no
per-value branching.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from connectors.api import DataError, Schema, SchemaType, struct

Parser = Callable[[str], Any]

DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
TIMESTAMP = "io.debezium.time.Timestamp"
TIME = "io.debezium.time.Time"
ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"
DATE = "io.debezium.time.Date"
MICRO_TIME = "io.debezium.time.MicroTime"
ZONED_TIME = "io.debezium.time.ZonedTime"
UUID = "io.debezium.data.Uuid"
JSON = "io.debezium.data.Json"
MICRO_DURATION = "io.debezium.time.MicroDuration"
CONNECT_DATE = "org.apache.kafka.connect.data.Date"
CONNECT_TIME = "org.apache.kafka.connect.data.Time"
CONNECT_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"

TIME_PRECISION_MODES = ("adaptive", "adaptive_time_microseconds", "connect")
BINARY_HANDLING_MODES = ("bytes", "base64", "base64-url-safe", "hex")

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)

# element type OID of each array type OID we know
ARRAY_ELEMENTS = {
    1000: 16, 1001: 17, 1002: 18, 1003: 19, 1005: 21, 1007: 23, 1016: 20, 1028: 26,
    1021: 700, 1022: 701, 1231: 1700, 1009: 25, 1015: 1043, 1014: 1042, 1115: 1114,
    1185: 1184, 1182: 1082, 1183: 1083, 1270: 1266, 1187: 1186, 2951: 2950, 199: 114, 3807: 3802,
}


def _bool(text: str) -> bool:
    return text == "t" or text == "true"  # output function vs the ::text cast


def _bytea(text: str) -> bytes:
    if text.startswith("\\x"):
        return bytes.fromhex(text[2:])
    raise DataError(f"bytea value not in hex format: {text[:20]!r}")


def _bytea_base64(text: str) -> str:
    return base64.b64encode(_bytea(text)).decode("ascii")


def _bytea_base64_url(text: str) -> str:
    return base64.urlsafe_b64encode(_bytea(text)).decode("ascii")


def _bytea_hex(text: str) -> str:
    if text.startswith("\\x"):
        return text[2:]  # PostgreSQL's hex output is already lowercase
    raise DataError(f"bytea value not in hex format: {text[:20]!r}")


def _timestamp_us(text: str) -> int:
    if text == "infinity":
        return _INT64_MAX
    if text == "-infinity":
        return _INT64_MIN
    delta = dt.datetime.fromisoformat(text) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _timestamp_epoch_ms(text: str) -> int:
    """io.debezium.time.Timestamp: ms since the epoch (infinity: int64 bounds)."""
    micros = _timestamp_us(text)
    return micros if micros in (_INT64_MAX, _INT64_MIN) else micros // 1000


def _time_of_day_ms(text: str) -> int:
    """io.debezium.time.Time: ms since midnight."""
    return _time_us(text) // 1000


def _timestamp_ms(text: str) -> dt.datetime | int:
    """A Connect Timestamp: an aware UTC datetime truncated to ms (infinity: int64 bounds)."""
    if text == "infinity":
        return _INT64_MAX
    if text == "-infinity":
        return _INT64_MIN
    value = dt.datetime.fromisoformat(text)
    return value.replace(microsecond=value.microsecond // 1000 * 1000, tzinfo=dt.UTC)


def zoned_timestamp_parser(typmod: int) -> Parser:
    """io.debezium.time.ZonedTimestamp strings for a ``timestamptz(typmod)`` column.

    As Debezium 3.x: UTC, ``Z``, and a fraction of exactly the declared
    precision (6 when none is declared): ``...15.638720Z``, ``...15.000000Z``,
    ``...15.500Z`` for timestamptz(3). timestamptz(0) has no fraction. Years
    beyond 9999 get a ``+`` and BC years are astronomical (``-0001`` is 2 BC),
    as Java's ISO formatter writes them; infinities stay ``infinity``/``-infinity``.
    """
    width = 6 if typmod < 0 else min(typmod, 6)
    return _ZONED_TIMESTAMP_PARSERS[width]


def _zoned_timestamp_with(width: int) -> Parser:
    if width == 0:
        def parse_whole(text: str) -> str:
            if text[-3:] == "+00" and text[4] == "-" and text[10] == " ":
                return f"{text[:10]}T{text[11:-3]}Z"  # PostgreSQL writes no zeros to trim
            return _zoned_timestamp_other(text, 0)

        return parse_whole
    pads = tuple("0" * max(width - n, 0) for n in range(10))  # by the digits written

    def parse(text: str) -> str:
        # the usual text of a UTC session: "2024-01-01 10:00:15[.63872]+00"
        if text[-3:] == "+00" and text[4] == "-" and text[10] == " ":
            digits = text[20:-3]
            return f"{text[:10]}T{text[11:19]}.{digits}{pads[len(digits)]}Z"
        return _zoned_timestamp_other(text, width)

    return parse


def _fraction(digits: str, width: int) -> str:
    """The fraction part: ``width`` digits, or PostgreSQL's trimmed digits for width 0."""
    if width:
        return "." + digits.ljust(width, "0")
    return "." + digits if digits else ""


_TIMESTAMPTZ_TEXT = re.compile(
    r"(\d{4,})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?"
    r"([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?( BC)?"
)


def _zoned_timestamp_other(text: str, width: int) -> str:
    """Infinities, 5+ digit and BC years, offsets other than UTC."""
    if text in ("infinity", "-infinity"):
        return text
    match = _TIMESTAMPTZ_TEXT.fullmatch(text)
    if match is None:
        raise DataError(f"not a timestamptz value: {text[:40]!r}")
    year_text, month, day, clock, digits, sign, hours, minutes, seconds, bc = match.groups()
    year = 1 - int(year_text) if bc else int(year_text)
    offset_s = int(hours) * 3600 + int(minutes or 0) * 60 + int(seconds or 0)
    if offset_s:
        # the Gregorian calendar repeats every 400 years: shift in a year datetime can hold
        base = 2000 + year % 400
        local = dt.datetime.fromisoformat(f"{base}-{month}-{day}T{clock}")
        utc = local - dt.timedelta(seconds=offset_s if sign == "+" else -offset_s)
        year, month, day, clock = (
            utc.year + year - base, f"{utc.month:02d}", f"{utc.day:02d}", f"{utc:%H:%M:%S}"
        )
    return f"{_iso_year(year)}-{month}-{day}T{clock}{_fraction(digits or '', width)}Z"


def _iso_year(year: int) -> str:
    """A year as Java's ISO date formatter writes it (4 digits, ``+`` past 9999, ``-`` BC)."""
    if year > 9999:
        return f"+{year}"
    if year < 0:
        return f"-{-year:04d}"
    return f"{year:04d}"


_ZONED_TIMESTAMP_PARSERS = tuple(_zoned_timestamp_with(width) for width in range(7))


def _iso(base: str, micros: int) -> str:
    if not micros:
        return base
    return base + "." + f"{micros:06d}".rstrip("0")


def _date_days(text: str) -> int:
    if text == "infinity":
        return 2_147_483_647
    if text == "-infinity":
        return -2_147_483_648
    return (dt.date.fromisoformat(text) - _EPOCH_DATE).days


def _date(text: str) -> dt.date | int:
    """A Connect Date: a datetime.date (infinity: int32 day bounds, as adaptive)."""
    if text == "infinity" or text == "-infinity":
        return _date_days(text)
    return dt.date.fromisoformat(text)


def _time_ms(text: str) -> dt.time | int:
    """A Connect Time: a datetime.time truncated to ms (24:00:00: 86 400 000 ms as an int)."""
    if text.startswith("24:00:00"):
        return 86_400_000
    value = dt.time.fromisoformat(text)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def _time_us(text: str) -> int:
    if text.startswith("24:00:00"):
        return 86_400_000_000
    value = dt.time.fromisoformat(text)
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def _zoned_time(text: str) -> str:
    cut = max(text.rfind("+"), text.rfind("-"))
    clock, offset = text[:cut], text[cut:]
    if len(offset) == 3:
        offset += ":00"
    utc = dt.datetime.fromisoformat(f"2000-01-01T{clock}{offset}").astimezone(dt.UTC)
    return _iso(utc.strftime("%H:%M:%S"), utc.microsecond) + "Z"


_ISO_INTERVAL = re.compile(
    r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?"
    r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?"
)
_DAYS_PER_MONTH = Decimal("30.4375")  # 365.25 / 12, as Debezium counts a month


def _interval_us(text: str) -> int:
    """An ISO-8601 interval (the session's IntervalStyle) as microseconds."""
    match = _ISO_INTERVAL.fullmatch(text)
    if match is None:
        raise DataError(f"not an ISO-8601 interval: {text[:40]!r}")
    y, mo, w, d, h, mi, sec = (Decimal(part) if part else Decimal(0) for part in match.groups())
    days = (y * 12 + mo) * _DAYS_PER_MONTH + w * 7 + d
    return int((((days * 24 + h) * 60 + mi) * 60 + sec) * 1_000_000)


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise DataError(f"not a numeric value: {text[:40]!r}") from None
    return value if value.is_finite() else None  # NaN/Infinity: Debezium writes null


def _variable_decimal(text: str) -> dict[str, Any] | None:
    value = _decimal(text)
    if value is None:
        return None
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -exponent
    if scale < 0:
        unscaled *= 10 ** (-scale)
        scale = 0
    return {"scale": scale, "value": _twos_complement(unscaled)}


def _twos_complement(number: int) -> bytes:
    length = ((number if number >= 0 else ~number).bit_length() + 8) // 8  # minimal, as Java
    return number.to_bytes(length, "big", signed=True)


def _double_decimal(text: str) -> float:
    return float(text)


def _named(kind: SchemaType, name: str, **params: str) -> Schema:
    return Schema(kind, name=name, version=1, parameters=params or None)


_SIMPLE: dict[int, tuple[Schema, Parser]] = {
    16: (Schema(SchemaType.BOOLEAN), _bool),
    17: (Schema(SchemaType.BYTES), _bytea),
    20: (Schema(SchemaType.INT64), int),
    21: (Schema(SchemaType.INT16), int),
    23: (Schema(SchemaType.INT32), int),
    26: (Schema(SchemaType.INT64), int),
    700: (Schema(SchemaType.FLOAT32), float),
    701: (Schema(SchemaType.FLOAT64), float),
    1114: (_named(SchemaType.INT64, MICRO_TIMESTAMP), _timestamp_us),
    1184: (_named(SchemaType.STRING, ZONED_TIMESTAMP), zoned_timestamp_parser(-1)),
    1082: (_named(SchemaType.INT32, DATE), _date_days),
    1083: (_named(SchemaType.INT64, MICRO_TIME), _time_us),
    1266: (_named(SchemaType.STRING, ZONED_TIME), _zoned_time),
    1186: (_named(SchemaType.INT64, MICRO_DURATION), _interval_us),
    2950: (_named(SchemaType.STRING, UUID), str),
    114: (_named(SchemaType.STRING, JSON), str),
    3802: (_named(SchemaType.STRING, JSON), str),
}
_STRING = (Schema(SchemaType.STRING), str)
# time.precision.mode=connect: Kafka Connect's logical types (no parameters)
_CONNECT_TEMPORAL: dict[int, tuple[Schema, Parser]] = {
    1082: (_named(SchemaType.INT32, CONNECT_DATE), _date),
    1083: (_named(SchemaType.INT32, CONNECT_TIME), _time_ms),
    1114: (_named(SchemaType.INT64, CONNECT_TIMESTAMP), _timestamp_ms),
}
# time.precision.mode=adaptive, a precision of 0-3 digits: Debezium's millisecond types
_ADAPTIVE_MILLIS: dict[int, tuple[Schema, Parser]] = {
    1083: (_named(SchemaType.INT32, TIME), _time_of_day_ms),
    1114: (_named(SchemaType.INT64, TIMESTAMP), _timestamp_epoch_ms),
}
_BINARY: dict[str, tuple[Schema, Parser]] = {
    "bytes": _SIMPLE[17],
    "base64": (Schema(SchemaType.STRING), _bytea_base64),
    "base64-url-safe": (Schema(SchemaType.STRING), _bytea_base64_url),
    "hex": (Schema(SchemaType.STRING), _bytea_hex),
}
_VARIABLE_DECIMAL_SCHEMA = struct(
    ("scale", Schema(SchemaType.INT32)),
    ("value", Schema(SchemaType.BYTES)),
    name=VARIABLE_SCALE_DECIMAL,
)


def column_type(
    type_oid: int,
    typmod: int,
    decimal_mode: str = "precise",
    time_mode: str = "adaptive",
    binary_mode: str = "bytes",
) -> tuple[Schema, Parser]:
    """The (required) Connect schema of a column and the parser of its text values, for
    decimal.handling.mode, time.precision.mode and binary.handling.mode."""
    element = ARRAY_ELEMENTS.get(type_oid)
    if element is not None:
        # a timestamptz(p)[] keeps its elements' precision (Debezium pads them alike)
        element_schema, element_parser = column_type(
            element, typmod if element == 1184 else -1, decimal_mode, time_mode, binary_mode
        )
        return (
            Schema(SchemaType.ARRAY, value_schema=element_schema.as_optional()),
            _array_parser(element_parser),
        )
    if type_oid == 1700:
        return _numeric(typmod, decimal_mode)
    if type_oid == 17:
        return _BINARY[binary_mode]
    if type_oid == 1184:
        return _SIMPLE[1184][0], zoned_timestamp_parser(typmod)
    if time_mode == "connect" and type_oid in _CONNECT_TEMPORAL:
        return _CONNECT_TEMPORAL[type_oid]
    # time(p) / timestamp(p) have typmod p; adaptive_time_microseconds keeps time in µs
    if 0 <= typmod <= 3 and (type_oid == 1114 or (type_oid == 1083 and time_mode == "adaptive")):
        return _ADAPTIVE_MILLIS[type_oid]
    return _SIMPLE.get(type_oid, _STRING)


def _numeric(typmod: int, mode: str) -> tuple[Schema, Parser]:
    if mode == "double":
        return Schema(SchemaType.FLOAT64), _double_decimal
    if mode == "string":
        return Schema(SchemaType.STRING), str
    if typmod < 4:  # unconstrained numeric: scale varies per value
        return _VARIABLE_DECIMAL_SCHEMA, _variable_decimal
    precision = ((typmod - 4) >> 16) & 0xFFFF
    scale = (typmod - 4) & 0xFFFF
    schema = _named(
        SchemaType.BYTES, DECIMAL, scale=str(scale), **{"connect.decimal.precision": str(precision)}
    )
    return schema, _decimal


def _array_parser(element: Parser) -> Parser:
    def parse(text: str) -> list[Any]:
        return [None if item is None else element(item) for item in parse_array(text)]

    return parse


def parse_array(text: str) -> list[str | None]:
    """The elements of a one-dimensional array literal (``{1,"a b",NULL}``) as text."""
    if text.startswith("["):  # explicit bounds: "[0:1]={...}"
        text = text[text.index("=") + 1 :]
    if len(text) < 2 or text[0] != "{" or text[-1] != "}":
        raise DataError(f"not an array literal: {text[:40]!r}")
    body = text[1:-1]
    items: list[str | None] = []
    if not body:
        return items
    pos, end = 0, len(body)
    while pos <= end:
        if pos < end and body[pos] == '"':
            chars = []
            pos += 1
            while body[pos] != '"':
                if body[pos] == "\\":
                    pos += 1
                chars.append(body[pos])
                pos += 1
            items.append("".join(chars))
            pos += 2  # closing quote and comma
            continue
        comma = _next_comma(body, pos)
        raw = body[pos:comma]
        items.append(None if raw == "NULL" else raw)
        pos = comma + 1
    return items


def _next_comma(body: str, pos: int) -> int:
    depth = 0
    for index in range(pos, len(body)):
        char = body[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            return index
    return len(body)
