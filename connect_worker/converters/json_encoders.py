"""Compiled writers: Connect values of one schema -> JSON-ready data, fast.

:func:`.json_values.to_json_value` interprets the schema on every value. Here a
schema is compiled once into a :class:`Plan` per node: the Python types the fast
path accepts there (``NoneType`` only where a null stays null) and, where the
JSON differs from the Python value (logical types, bytes), a conversion. A
struct of plain fields then costs one C-level type check per field and hands
the caller's own dict to the JSON writer (it is never modified: conversions
write into a copy).

A plan covers the shapes records really have. Anything else (a null that takes
a default or is an error, a wrong type, an out-of-range int, a NaN, an int for
a float field, a map with non-string keys, ...) raises :class:`Fallback`, and
the caller converts the value with ``to_json_value``: the reference, which
also words every error. The results are the same JSON either way, and what the
fast path returns is safe for any JSON writer (no NaN, no int beyond 64 bits).
"""

from __future__ import annotations

import datetime as dt
from binascii import b2a_base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from connect_worker.converters.json_values import (
    DATE,
    DECIMAL,
    TIME,
    TIMESTAMP,
    decimal_scale,
    to_json_value,
)
from connectors.api import DataError, Schema, SchemaType

Convert = Callable[[Any], Any]
KindPlan = Callable[[Schema], tuple[frozenset[type], Convert | None]]
"""A schema node -> (the exact Python types the fast path takes there, their conversion)."""
_NONE = type(None)
_BYTES_TYPES = frozenset({bytes, bytearray, memoryview})
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DAY = dt.date(1970, 1, 1).toordinal()
_ONE_MS = dt.timedelta(milliseconds=1)
_INT_BITS = {SchemaType.INT8: 7, SchemaType.INT16: 15, SchemaType.INT32: 31, SchemaType.INT64: 63}
_contains = frozenset.__contains__


class Fallback(Exception):
    """The fast path does not cover this value: convert it with the reference code."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How the fast path handles one schema node.

    ``allowed``: the exact Python types taken (anything else -> Fallback);
    ``convert``: applied to non-null values, ``None`` when they are written as is.
    """

    allowed: frozenset[type]
    convert: Convert | None

    @classmethod
    def for_schema(
        cls, schema: Schema, kind_plan: KindPlan, logical: Mapping[str, KindPlan]
    ) -> Plan:
        """The types and conversion of the schema's logical type in ``logical``, or else
        ``kind_plan``'s; plus None where the schema allows a null."""
        plan = logical.get(schema.name) if schema.name is not None else None
        allowed, convert = (plan or kind_plan)(schema)
        if schema.optional and schema.default is None:
            allowed = allowed | {_NONE}
        return cls(frozenset(allowed), convert)

    def compiled(self) -> Convert:
        """A function applying this plan to one value (raises Fallback for other types)."""
        allowed, convert = self.allowed, self.convert

        def run(value: Any) -> Any:
            if type(value) not in allowed:
                raise Fallback
            return value if convert is None or value is None else convert(value)

        return run


def compile_encoder(schema: Schema) -> Convert:
    """A function writing values of ``schema`` as JSON-ready data, as ``to_json_value``
    does, or raising Fallback (or a DataError) for the caller to use the reference."""
    return encoder_plan(schema).compiled()


def encoder_plan(schema: Schema) -> Plan:
    """The fast-path plan for values of ``schema``."""
    return Plan.for_schema(schema, _kind_plan, _LOGICAL)


def _kind_plan(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    kind = schema.type
    if kind is SchemaType.STRING:
        return frozenset({str}), None
    if kind in _INT_BITS:
        return frozenset({int}), _int_check(1 << _INT_BITS[kind])
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return frozenset({float}), _finite
    if kind is SchemaType.BOOLEAN:
        return frozenset({bool}), None
    if kind is SchemaType.BYTES:
        return _BYTES_TYPES, _base64
    if kind is SchemaType.ARRAY and schema.value_schema is not None:
        return frozenset({list, tuple}), _sequence(encoder_plan(schema.value_schema))
    if kind is SchemaType.MAP and schema.key_schema is not None and schema.value_schema is not None:
        keys = schema.key_schema
        if keys.type is SchemaType.STRING and keys.name is None:
            return frozenset({dict}), _string_map(encoder_plan(schema.value_schema))
    if kind is SchemaType.STRUCT:
        return frozenset({dict}), _struct(schema)
    return frozenset(), None  # always the reference


def _int_check(bound: int) -> Convert:
    low = -bound

    def check(value: int) -> int:
        if low <= value < bound:
            return value
        raise Fallback

    return check


def _finite(value: float) -> float:
    if value - value == 0.0:  # false for inf and nan, which JSON writers disagree on
        return value
    raise Fallback


def _base64(value: Any) -> str:
    return b2a_base64(value, newline=False).decode("ascii")


def _sequence(items: Plan) -> Convert:
    allowed, convert = items.allowed, items.convert
    if convert is None:

        def check(value: Any) -> Any:
            if all(map(allowed.__contains__, map(type, value))):
                return value
            raise Fallback

        return check

    def convert_all(value: Any) -> list[Any]:
        if not all(map(allowed.__contains__, map(type, value))):
            raise Fallback
        return [item if item is None else convert(item) for item in value]

    return convert_all


def _string_map(values: Plan) -> Convert:
    convert_values = _sequence(values)

    def convert(value: dict[Any, Any]) -> Any:
        if not all(type(key) is str for key in value):
            raise Fallback
        converted = convert_values(value.values())
        if values.convert is None:
            return value
        return dict(zip(value, converted, strict=True))

    return convert


def _struct(schema: Schema) -> Convert:
    return struct_converter(schema, encoder_plan, copy_input=True)


def struct_converter(
    schema: Schema, plan_of: Callable[[Schema], Plan], *, copy_input: bool
) -> Convert:
    """A struct's converter from its fields' plans (``encoder_plan`` or ``decoder_plan``).

    Fields are reordered to the schema's when the dict's keys differ; with
    ``copy_input`` (writing a caller's record) a dict in order is copied before
    its fields are converted, never modified in place.
    """
    names = tuple(f.name for f in schema.fields)
    plans = [plan_of(f.schema) for f in schema.fields]
    allowed = tuple(p.allowed for p in plans)
    converts = tuple((f.name, p.convert) for f, p in zip(schema.fields, plans, strict=True)
                     if p.convert is not None)
    copy_first = copy_input and bool(converts)

    def convert(value: dict[str, Any]) -> dict[str, Any]:
        if tuple(value) != names:  # other order, missing or extra keys: the schema's fields
            value = {name: value.get(name) for name in names}
        elif copy_first:
            value = value.copy()  # never modify the caller's record
        if not all(map(_contains, allowed, map(type, value.values()))):
            raise Fallback
        for name, field_convert in converts:
            item = value[name]
            if item is not None:
                value[name] = field_convert(item)
        return value

    return convert


# ------------------------------------------------------------ logical types


def _decimal(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def reference(value: Any) -> Any:
        return to_json_value(schema, value)

    allowed = frozenset({Decimal, int, float}) | _BYTES_TYPES
    try:
        scale = decimal_scale(schema)
    except DataError:
        return allowed, reference
    if scale < 0:
        return allowed, reference
    factor = 10**scale

    def convert(value: Any) -> Any:
        if type(value) is not Decimal or not value.is_finite():
            return reference(value)
        numerator, denominator = value.as_integer_ratio()
        unscaled, rest = divmod(numerator * factor, denominator)
        if rest:
            raise Fallback  # more digits than the scale: the reference words the error
        length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        return _base64(unscaled.to_bytes(length, "big", signed=True))

    return allowed, convert


def _date(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def convert(value: Any) -> int:
        return value if type(value) is int else value.toordinal() - _EPOCH_DAY

    return frozenset({dt.date, int}), convert


def _time(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def convert(value: Any) -> int:
        if type(value) is int:
            return value
        seconds = (value.hour * 60 + value.minute) * 60 + value.second
        return seconds * 1000 + value.microsecond // 1000

    return frozenset({dt.time, int}), convert


def _timestamp(schema: Schema) -> tuple[frozenset[type], Convert | None]:
    def convert(value: Any) -> int:
        if type(value) is int:
            return value
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        milliseconds: int = (value - _EPOCH) // _ONE_MS
        return milliseconds

    return frozenset({dt.datetime, int}), convert


_LOGICAL: dict[str, KindPlan] = {
    DECIMAL: _decimal,
    DATE: _date,
    TIME: _time,
    TIMESTAMP: _timestamp,
}
