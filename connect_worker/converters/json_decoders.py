"""Compiled readers: parsed JSON of one schema -> Connect values, fast.

The mirror of :mod:`.json_encoders`: a schema is compiled once into a plan per
node (the JSON types accepted there, and a conversion where the Connect value
differs from the parsed one: logical types, bytes). A struct of plain fields
costs one C-level type check per field and is returned as parsed; only
logical, bytes and nested fields are converted, in place.

The input must be freshly parsed data the caller owns (it is modified). When
the fast path does not apply it raises (:class:`~.json_encoders.Fallback`, or
whatever a conversion raised), possibly after converting part of the data, so
the caller parses the payload again and uses ``.json_values.from_json_value``, the
reference, which also words every error.
"""

from __future__ import annotations

import datetime as dt
from binascii import a2b_base64
from decimal import Decimal
from typing import Any

from connect_worker.converters.json_encoders import (
    Convert,
    Fallback,
    KindPlan,
    Plan,
    struct_converter,
)
from connect_worker.converters.json_values import (
    DATE,
    DECIMAL,
    TIME,
    TIMESTAMP,
    decimal_scale,
)
from connectors.api import DataError, Schema, SchemaType

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DAY = dt.date(1970, 1, 1).toordinal()
_PLAIN = {
    SchemaType.STRING: frozenset({str}),
    SchemaType.INT8: frozenset({int}),
    SchemaType.INT16: frozenset({int}),
    SchemaType.INT32: frozenset({int}),
    SchemaType.INT64: frozenset({int}),
    SchemaType.FLOAT32: frozenset({float}),
    SchemaType.FLOAT64: frozenset({float}),
    SchemaType.BOOLEAN: frozenset({bool}),
}
_INT64_FLOAT = 2.0**63


def compile_decoder(schema: Schema) -> Convert:
    """A function reading parsed JSON of ``schema`` as ``from_json_value`` does, or
    raising for the caller to re-parse and use the reference (see the module doc)."""
    return decoder_plan(schema).compiled()


def decoder_plan(schema: Schema) -> Plan:
    """The fast-path plan for parsed JSON of ``schema``."""
    return Plan.for_schema(schema, _kind_plan, _LOGICAL)


def _kind_plan(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    kind = schema.type
    plain = _PLAIN.get(kind)
    if plain is not None:
        return plain, None
    if kind is SchemaType.BYTES:
        return frozenset({str}), _base64
    if kind is SchemaType.ARRAY and schema.value_schema is not None:
        return frozenset({list}), _list(decoder_plan(schema.value_schema))
    if kind is SchemaType.MAP and schema.key_schema is not None and schema.value_schema is not None:
        keys = schema.key_schema
        if keys.type is SchemaType.STRING and keys.name is None:
            return frozenset({dict}), _string_map(decoder_plan(schema.value_schema))
    if kind is SchemaType.STRUCT:
        return frozenset({dict}), _struct(schema)
    return frozenset(), None  # always the reference


def _base64(value: str) -> bytes:
    return a2b_base64(value, strict_mode=True)


def _list(items: Plan) -> Convert:
    allowed, convert = items.allowed, items.convert

    def decode(value: list[Any]) -> list[Any]:
        if not all(map(allowed.__contains__, map(type, value))):
            raise Fallback
        if convert is not None:
            value[:] = [item if item is None else convert(item) for item in value]
        return value

    return decode


def _string_map(values: Plan) -> Convert:
    allowed, convert = values.allowed, values.convert

    def decode(value: dict[str, Any]) -> dict[str, Any]:
        if not all(map(allowed.__contains__, map(type, value.values()))):
            raise Fallback
        if convert is not None:
            for key, item in value.items():
                if item is not None:
                    value[key] = convert(item)
        return value

    return decode


def _struct(schema: Schema) -> Convert:
    return struct_converter(schema, decoder_plan, copy_input=False)  # parsed JSON: ours


# ------------------------------------------------------------ logical types


def _decimal(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    try:
        scale = decimal_scale(schema)
    except DataError:
        return frozenset(), None  # the reference words the error
    if scale < 0:
        return frozenset(), None

    def decode(value: Any) -> Decimal:
        if type(value) is not str:  # Kafka's decimal.format=NUMERIC
            if type(value) is float and not -_INT64_FLOAT < value < _INT64_FLOAT:
                raise Fallback  # maybe a long integer literal orjson made a float
            return Decimal(str(value))
        unscaled = int.from_bytes(a2b_base64(value, strict_mode=True), "big", signed=True)
        return Decimal(f"{unscaled}E-{scale}")

    return frozenset({str, int, float}), decode


def _date(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def decode(value: int) -> dt.date:
        return dt.date.fromordinal(_EPOCH_DAY + value)

    return frozenset({int}), decode


def _time(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def decode(value: int) -> dt.time:
        if not 0 <= value < 86_400_000:
            raise Fallback
        seconds, ms = divmod(value, 1000)
        return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)

    return frozenset({int}), decode


def _timestamp(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def decode(value: int) -> dt.datetime:
        seconds, ms = divmod(value, 1000)
        return _EPOCH + dt.timedelta(0, seconds, ms * 1000)

    return frozenset({int}), decode


_LOGICAL: dict[str, KindPlan] = {
    DECIMAL: _decimal,
    DATE: _date,
    TIME: _time,
    TIMESTAMP: _timestamp,
}

