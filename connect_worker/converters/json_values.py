"""Connect values <-> JSON-ready Python data, as Kafka's JsonConverter maps them.

With a schema: integers and floats as numbers, ``bytes`` as base64 strings,
structs as objects (fields in schema order), maps with string keys as objects
and other maps as ``[[key, value], ...]`` arrays, and the logical types as
Kafka encodes them:

============================================  ========  ==========================
name (``org.apache.kafka.connect.data.*``)     JSON      Python value
============================================  ========  ==========================
``Decimal`` (bytes, parameter ``scale``)       base64 of the unscaled big-endian
                                                         two's-complement integer;
                                                         ``decimal.Decimal``
``Date`` (int32)                               days since 1970-01-01; ``datetime.date``
``Time`` (int32)                               ms since midnight; ``datetime.time``
``Timestamp`` (int64)                          ms since the epoch; aware UTC ``datetime``
============================================  ========  ==========================

A null value takes the schema's default, else stays null if the schema is
optional, else is a DataError. Without a schema, the JSON shape is inferred.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from connectors.api import DataError, Schema, SchemaType

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_INT_BOUNDS = {
    SchemaType.INT8: 1 << 7,
    SchemaType.INT16: 1 << 15,
    SchemaType.INT32: 1 << 31,
    SchemaType.INT64: 1 << 63,
}
_BYTES_TYPES = (bytes, bytearray, memoryview)


# ------------------------------------------------------------------ to JSON


def to_json_value(schema: Schema, value: Any) -> Any:
    """``value`` (Connect data of ``schema``) as JSON-ready Python data."""
    if value is None:
        if schema.default is not None:
            value = schema.default
        elif schema.optional:
            return None
        else:
            raise DataError(f"null value for a required {_describe(schema)} with no default")
    if schema.name is not None:
        logical = _LOGICAL_TO_JSON.get(schema.name)
        if logical is not None:
            return logical(schema, value)
    return _TO_JSON[schema.type](schema, value)


def _string(schema: Schema, value: Any) -> Any:
    if type(value) is not str:
        raise _mismatch(schema, value)
    return value


def _integer(schema: Schema, value: Any) -> Any:
    if type(value) is not int:
        raise _mismatch(schema, value)
    return value


def _integer_in_bounds(schema: Schema, value: Any) -> Any:
    bound = _INT_BOUNDS[schema.type]
    if not -bound <= _integer(schema, value) < bound:
        raise DataError(f"{value} does not fit in {schema.type.value}")
    return value


def _float(schema: Schema, value: Any) -> Any:
    if type(value) not in (float, int):
        raise _mismatch(schema, value)
    return float(value)


def _boolean(schema: Schema, value: Any) -> Any:
    if type(value) is not bool:
        raise _mismatch(schema, value)
    return value


def _bytes(schema: Schema, value: Any) -> Any:
    if not isinstance(value, _BYTES_TYPES):
        raise _mismatch(schema, value)
    return base64.b64encode(value).decode("ascii")


def _array(schema: Schema, value: Any) -> Any:
    if not isinstance(value, list | tuple):
        raise _mismatch(schema, value)
    items = schema.value_schema
    assert items is not None, "array schema without value_schema"
    return [to_json_value(items, item) for item in value]


def _map(schema: Schema, value: Any) -> Any:
    if not isinstance(value, dict):
        raise _mismatch(schema, value)
    keys, values = schema.key_schema, schema.value_schema
    assert keys is not None and values is not None, "map schema without key/value schema"
    if keys.type is SchemaType.STRING and keys.name is None:
        return {to_json_value(keys, k): to_json_value(values, v) for k, v in value.items()}
    return [[to_json_value(keys, k), to_json_value(values, v)] for k, v in value.items()]


def _struct(schema: Schema, value: Any) -> Any:
    if not isinstance(value, dict):
        raise _mismatch(schema, value)
    return {f.name: to_json_value(f.schema, value.get(f.name)) for f in schema.fields}


_TO_JSON: dict[SchemaType, Callable[[Schema, Any], Any]] = {
    SchemaType.STRING: _string,
    **dict.fromkeys(_INT_BOUNDS, _integer_in_bounds),
    SchemaType.FLOAT32: _float,
    SchemaType.FLOAT64: _float,
    SchemaType.BOOLEAN: _boolean,
    SchemaType.BYTES: _bytes,
    SchemaType.ARRAY: _array,
    SchemaType.MAP: _map,
    SchemaType.STRUCT: _struct,
}


def _decimal_to_json(schema: Schema, value: Any) -> Any:
    if isinstance(value, _BYTES_TYPES):  # already encoded
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = Decimal(str(value))
    if not isinstance(value, Decimal) or not value.is_finite():
        raise _mismatch(schema, value)
    scale = decimal_scale(schema)
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift >= 0:
        unscaled *= 10**shift
    else:
        unscaled, dropped = divmod(unscaled, 10**-shift)
        if dropped:
            raise DataError(f"decimal {value} has more than {scale} digits after the point")
    if sign:
        unscaled = -unscaled
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")


def _date_to_json(schema: Schema, value: Any) -> Any:
    if type(value) is int:
        return value
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        raise _mismatch(schema, value)
    return (value - _EPOCH_DATE).days


def _time_to_json(schema: Schema, value: Any) -> Any:
    if type(value) is int:
        return value
    if not isinstance(value, dt.time):
        raise _mismatch(schema, value)
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def _timestamp_to_json(schema: Schema, value: Any) -> Any:
    if type(value) is int:
        return value
    if not isinstance(value, dt.datetime):
        raise _mismatch(schema, value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_LOGICAL_TO_JSON: dict[str, Callable[[Schema, Any], Any]] = {
    DECIMAL: _decimal_to_json,
    DATE: _date_to_json,
    TIME: _time_to_json,
    TIMESTAMP: _timestamp_to_json,
}


def infer_json_value(value: Any) -> Any:
    """Schemaless data as JSON-ready Python data (bytes as base64, dates ISO 8601)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, _BYTES_TYPES):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, list | tuple):
        return [infer_json_value(v) for v in value]
    if isinstance(value, dict):
        if all(type(k) is str for k in value):
            return {k: infer_json_value(v) for k, v in value.items()}
        return [[infer_json_value(k), infer_json_value(v)] for k, v in value.items()]
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, int | float | str):  # subclasses (IntEnum, StrEnum, ...)
        return value
    raise DataError(f"cannot write a {type(value).__name__} as JSON without a schema")


# ---------------------------------------------------------------- from JSON


def from_json_value(schema: Schema, value: Any) -> Any:
    """JSON data (as parsed) of ``schema`` as Connect data."""
    if value is None:
        if schema.default is not None:
            return schema.default
        if schema.optional:
            return None
        raise DataError(f"null value for a required {_describe(schema)}")
    if schema.name is not None:
        logical = _LOGICAL_FROM_JSON.get(schema.name)
        if logical is not None:
            return logical(schema, value)
    return _FROM_JSON[schema.type](schema, value)


def _bytes_from(schema: Schema, value: Any) -> Any:
    if type(value) is not str:
        raise _mismatch(schema, value)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise DataError(f"invalid base64 for a {_describe(schema)}: {value[:40]!r}") from None


def _array_from(schema: Schema, value: Any) -> Any:
    if type(value) is not list:
        raise _mismatch(schema, value)
    items = schema.value_schema
    assert items is not None
    return [from_json_value(items, item) for item in value]


def _map_from(schema: Schema, value: Any) -> Any:
    keys, values = schema.key_schema, schema.value_schema
    assert keys is not None and values is not None
    if type(value) is dict:
        return {from_json_value(keys, k): from_json_value(values, v) for k, v in value.items()}
    if type(value) is not list or not all(type(p) is list and len(p) == 2 for p in value):
        raise _mismatch(schema, value)
    return {from_json_value(keys, k): from_json_value(values, v) for k, v in value}


def _struct_from(schema: Schema, value: Any) -> Any:
    if type(value) is not dict:
        raise _mismatch(schema, value)
    return {f.name: from_json_value(f.schema, value.get(f.name)) for f in schema.fields}


_FROM_JSON: dict[SchemaType, Callable[[Schema, Any], Any]] = {
    SchemaType.STRING: _string,
    **dict.fromkeys(_INT_BOUNDS, _integer),
    SchemaType.FLOAT32: _float,
    SchemaType.FLOAT64: _float,
    SchemaType.BOOLEAN: _boolean,
    SchemaType.BYTES: _bytes_from,
    SchemaType.ARRAY: _array_from,
    SchemaType.MAP: _map_from,
    SchemaType.STRUCT: _struct_from,
}


def decimal_scale(schema: Schema) -> int:
    """The ``scale`` parameter of a Decimal schema."""
    raw = (schema.parameters or {}).get("scale")
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        raise DataError(f"Decimal schema with a non-integer scale {raw!r}") from None


def _decimal_from(schema: Schema, value: Any) -> Any:
    scale = decimal_scale(schema)
    if type(value) in (int, float):  # Kafka's decimal.format=NUMERIC
        return Decimal(str(value))
    raw = _bytes_from(schema, value)
    unscaled = int.from_bytes(raw, "big", signed=True)
    return Decimal(f"{unscaled}E-{scale}")


def _date_from(schema: Schema, value: Any) -> Any:
    if type(value) is not int:
        raise _mismatch(schema, value)
    return _EPOCH_DATE + dt.timedelta(days=value)


def _time_from(schema: Schema, value: Any) -> Any:
    if type(value) is not int or not 0 <= value < 86_400_000:
        raise _mismatch(schema, value)
    seconds, ms = divmod(value, 1000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)


def _timestamp_from(schema: Schema, value: Any) -> Any:
    if type(value) is not int:
        raise _mismatch(schema, value)
    try:
        return _EPOCH + dt.timedelta(milliseconds=value)
    except OverflowError:
        raise DataError(f"timestamp {value} ms is out of range") from None


_LOGICAL_FROM_JSON: dict[str, Callable[[Schema, Any], Any]] = {
    DECIMAL: _decimal_from,
    DATE: _date_from,
    TIME: _time_from,
    TIMESTAMP: _timestamp_from,
}


def _describe(schema: Schema) -> str:
    kind = schema.name.rsplit(".", 1)[-1] if schema.name else schema.type.value
    return f"{kind} field"


def _mismatch(schema: Schema, value: Any) -> DataError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return DataError(f"a {type(value).__name__} ({shown}) does not fit a {_describe(schema)}")
