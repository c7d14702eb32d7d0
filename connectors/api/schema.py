"""Kafka Connect's data schemas, for records that carry them.

A record's key and value may have a :class:`Schema` (JDBC and CDC sources set
them; JsonConverter with ``schemas.enable=true`` reads and writes them as
Kafka Connect's envelope). Values are plain Python: ``int``, ``float``,
``bool``, ``str``, ``bytes``, ``list``, ``dict`` (maps and structs alike: a
struct is a ``dict`` whose keys are the schema's field names, in order).
Logical types keep Kafka's names (``org.apache.kafka.connect.data.Decimal``,
``...Timestamp``, ``...Date``, ``...Time``) in ``name``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any


class SchemaType(StrEnum):
    """Kafka Connect's schema types, with their JSON names."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float"
    FLOAT64 = "double"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"


@dataclass(frozen=True, slots=True)
class Field:
    """A named, ordered field of a struct schema."""

    name: str
    schema: Schema
    index: int = 0


@dataclass(frozen=True, slots=True)
class Schema:
    """A Kafka Connect schema: type, optionality, name/version and children."""

    type: SchemaType
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    default: Any = None
    parameters: dict[str, str] | None = None
    fields: tuple[Field, ...] = ()
    key_schema: Schema | None = None  # maps
    value_schema: Schema | None = None  # maps and arrays

    def field(self, name: str) -> Field | None:
        """The struct field called ``name``, if any."""
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def as_optional(self) -> Schema:
        return replace(self, optional=True)


def struct(*fields: tuple[str, Schema], name: str | None = None, optional: bool = False) -> Schema:
    """Build a struct schema from ``(name, schema)`` pairs."""
    return Schema(
        SchemaType.STRUCT,
        optional=optional,
        name=name,
        fields=tuple(Field(n, s, i) for i, (n, s) in enumerate(fields)),
    )


INT8 = Schema(SchemaType.INT8)
INT16 = Schema(SchemaType.INT16)
INT32 = Schema(SchemaType.INT32)
INT64 = Schema(SchemaType.INT64)
FLOAT32 = Schema(SchemaType.FLOAT32)
FLOAT64 = Schema(SchemaType.FLOAT64)
BOOLEAN = Schema(SchemaType.BOOLEAN)
STRING = Schema(SchemaType.STRING)
BYTES = Schema(SchemaType.BYTES)
OPTIONAL_STRING = Schema(SchemaType.STRING, optional=True)
OPTIONAL_INT64 = Schema(SchemaType.INT64, optional=True)

