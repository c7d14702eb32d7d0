"""Value casts between Kafka Connect's primitive types, for Cast.

Each caster takes any supported Python value and returns the target type or
raises :class:`CastError` with the reason (the caller adds the field name).
The common case (the value already has the target type) returns at once.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from connectors.api.schema import SchemaType
from transforms._schemas import EPOCH, type_name

#: Cast's spec names (Kafka's) -> schema types.
TARGET_TYPES: dict[str, SchemaType] = {
    "int8": SchemaType.INT8,
    "int16": SchemaType.INT16,
    "int32": SchemaType.INT32,
    "int64": SchemaType.INT64,
    "float32": SchemaType.FLOAT32,
    "float64": SchemaType.FLOAT64,
    "boolean": SchemaType.BOOLEAN,
    "string": SchemaType.STRING,
}

_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(NaN|Infinity)")


class CastError(ValueError):
    """A value that cannot be cast; the message says why."""


def _integer(bits: int) -> Callable[[Any], int]:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    label = f"int{bits}"

    def cast(value: Any) -> int:
        kind = type(value)
        if kind is int:
            result = value
        elif kind is str:
            try:
                if "_" in value:  # Python reads 1_000; Java does not
                    raise ValueError
                result = int(value)
            except ValueError:
                raise CastError(f"{value!r} is not an integer") from None
        elif kind is bool:
            return int(value)
        elif kind is float or isinstance(value, Decimal):
            if not math.isfinite(value):
                raise CastError(f"{value} has no {label} value")
            result = int(value)  # truncates towards zero, as Java's casts do
        elif isinstance(value, int):
            result = int(value)
        else:
            raise CastError(f"cannot cast a {type_name(value)} to {label}")
        if not low <= result <= high:
            raise CastError(f"{value!r} is out of range for {label} ({low}..{high})")
        return result

    return cast


def _float(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value
    if kind is str:
        text = value.strip()
        if not _FLOAT_TEXT.fullmatch(text):
            raise CastError(f"{value!r} is not a number")
        return float(text.replace("Infinity", "inf"))
    if kind is bool or isinstance(value, int | float | Decimal):
        return float(value)
    raise CastError(f"cannot cast a {type_name(value)} to a floating-point number")


def _boolean(value: Any) -> bool:
    kind = type(value)
    if kind is bool:
        return value
    if kind is str:
        text = value.strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise CastError(f"{value!r} is not 'true' or 'false'")
    if isinstance(value, int | float | Decimal):
        return value != 0
    raise CastError(f"cannot cast a {type_name(value)} to boolean")


def _string(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return repr(value)
    if isinstance(value, int | float):
        return _string(int(value) if isinstance(value, int) else float(value))
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dt.datetime):
        return _iso_timestamp(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    raise CastError(f"cannot cast a {type_name(value)} to string")


def _iso_timestamp(value: dt.datetime) -> str:
    """``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` in UTC, as Kafka writes timestamps."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    value = EPOCH + (value - EPOCH)  # to UTC
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


CASTERS: dict[SchemaType, Callable[[Any], Any]] = {
    SchemaType.INT8: _integer(8),
    SchemaType.INT16: _integer(16),
    SchemaType.INT32: _integer(32),
    SchemaType.INT64: _integer(64),
    SchemaType.FLOAT32: _float,
    SchemaType.FLOAT64: _float,
    SchemaType.BOOLEAN: _boolean,
    SchemaType.STRING: _string,
}
