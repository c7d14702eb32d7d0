"""Schema helpers for transforms that reshape structs, and checks with clear errors.

A struct value is a ``dict`` whose keys are its schema's field names in order;
a transform that changes the shape builds the new schema once per input schema
(:class:`SchemaCache`) and the new dict per record.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from connectors.api.errors import DataError
from connectors.api.schema import Field, Schema, SchemaType

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"

PRIMITIVES = frozenset(
    {
        SchemaType.INT8,
        SchemaType.INT16,
        SchemaType.INT32,
        SchemaType.INT64,
        SchemaType.FLOAT32,
        SchemaType.FLOAT64,
        SchemaType.BOOLEAN,
        SchemaType.STRING,
        SchemaType.BYTES,
    }
)


def primitive(kind: SchemaType, optional: bool = False) -> Schema:
    """A plain schema of type ``kind``."""
    return Schema(kind, optional=optional)


def timestamp_schema(optional: bool = False) -> Schema:
    """Kafka's ``Timestamp`` logical type (int64 ms since the epoch; aware UTC datetime)."""
    return Schema(SchemaType.INT64, optional=optional, name=TIMESTAMP, version=1)


def date_schema(optional: bool = False) -> Schema:
    """Kafka's ``Date`` logical type (int32 days since the epoch; ``datetime.date``)."""
    return Schema(SchemaType.INT32, optional=optional, name=DATE, version=1)


def time_schema(optional: bool = False) -> Schema:
    """Kafka's ``Time`` logical type (int32 ms since midnight; ``datetime.time``)."""
    return Schema(SchemaType.INT32, optional=optional, name=TIME, version=1)


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MS = dt.timedelta(milliseconds=1)


def datetime_from_ms(ms: int) -> dt.datetime:
    """A ``Timestamp`` value: ms since the epoch as an aware UTC datetime."""
    return EPOCH + dt.timedelta(milliseconds=ms)


def ms_from_datetime(value: dt.datetime) -> int:
    """Ms since the epoch of a datetime (naive ones are taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return (value - EPOCH) // _MS


def struct_like(template: Schema, fields: Iterable[tuple[str, Schema]]) -> Schema:
    """A struct with ``template``'s name, version, doc, parameters and optionality."""
    return Schema(
        SchemaType.STRUCT,
        optional=template.optional,
        name=template.name,
        version=template.version,
        doc=template.doc,
        parameters=template.parameters,
        fields=tuple(Field(name, schema, i) for i, (name, schema) in enumerate(fields)),
    )


def field_pairs(schema: Schema) -> list[tuple[str, Schema]]:
    """A struct's fields as ``(name, schema)`` pairs."""
    return [(f.name, f.schema) for f in schema.fields]


def type_name(value: Any) -> str:
    """A short description of a value's type for error messages."""
    return "null" if value is None else type(value).__name__


def require_dict(value: Any, who: str) -> dict[str, Any]:
    """``value`` if it is a dict (a map or struct), else a DataError naming ``who``."""
    if type(value) is dict or isinstance(value, dict):
        return value
    raise DataError(f"{who}: expected a map value without a schema, got {type_name(value)}")


def require_struct(schema: Schema, value: Any, who: str) -> dict[str, Any]:
    """``value`` if ``schema`` is a struct and ``value`` a dict, else a DataError."""
    if schema.type is not SchemaType.STRUCT:
        raise DataError(f"{who}: expected a struct schema, got {schema.type.value}")
    if not isinstance(value, dict):
        raise DataError(f"{who}: expected a struct value (a dict), got {type_name(value)}")
    return value


def require_field(schema: Schema, name: str, who: str) -> Field:
    """The struct field ``name``, else a DataError listing the fields there are."""
    found = schema.field(name)
    if found is None:
        names = ", ".join(f.name for f in schema.fields) or "none"
        raise DataError(f"{who}: the schema has no field {name!r} (fields: {names})")
    return found


class SchemaCache:
    """Derived schemas per input schema, bounded.

    Schemas are unhashable (they may hold dicts), so entries are keyed by
    ``id`` and keep the input schema alive, which stops the id being reused.
    When full the cache starts over; schemas change rarely, so it rarely is.
    """

    __slots__ = ("_entries", "_max_entries")

    def __init__(self, max_entries: int = 256) -> None:
        self._entries: dict[int, tuple[Schema, Any]] = {}
        self._max_entries = max_entries

    def get(self, schema: Schema, build: Callable[[Schema], Any]) -> Any:
        """The cached ``build(schema)``; build it on first sight."""
        entry = self._entries.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        result = build(schema)
        if len(self._entries) >= self._max_entries:
            self._entries.clear()
        self._entries[id(schema)] = (schema, result)
        return result
