"""A captured table's shape and its Debezium schemas (Key, Value, Envelope).

One :class:`Table` per table version: made from the catalog (for the
snapshot) or from a pgoutput Relation message plus the catalog's primary key
and NOT NULL flags (while streaming; a new Relation message after ALTER TABLE
makes a new Table, so the next events carry the new schema). Schemas are built
once per Table and shared by its records, so converters can cache their text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from connectors.api import Schema, SchemaType, struct
from connectors.api.schema import OPTIONAL_INT64, OPTIONAL_STRING
from connectors.postgres_cdc.pgoutput import UNCHANGED_TOAST
from connectors.postgres_cdc.values import (
    CONNECT_DATE,
    CONNECT_TIME,
    CONNECT_TIMESTAMP,
    DECIMAL,
    ZONED_TIME,
    ZONED_TIMESTAMP,
    Parser,
    column_type,
)

UNAVAILABLE = "__debezium_unavailable_value"
#: The Debezium release whose PostgreSQL change events these follow (``source.version``).
DEBEZIUM_VERSION = "3.6.1.Final"

# Debezium 3.x's io.debezium.connector.postgresql.Source: the common fields (ts_us/ts_ns
# since 2.6, after sequence), then PostgreSQL's (origin/origin_lsn since 3.5)
SOURCE_SCHEMA = Schema(
    SchemaType.STRUCT,
    name="io.debezium.connector.postgresql.Source",
    version=1,
    fields=struct(
        ("version", Schema(SchemaType.STRING)),
        ("connector", Schema(SchemaType.STRING)),
        ("name", Schema(SchemaType.STRING)),
        ("ts_ms", Schema(SchemaType.INT64)),
        ("snapshot", Schema(
            SchemaType.STRING, optional=True, name="io.debezium.data.Enum", version=1,
            default="false", parameters={"allowed": "true,first,first_in_data_collection,"
                                         "last_in_data_collection,last,false,incremental"},
        )),
        ("db", Schema(SchemaType.STRING)),
        ("sequence", OPTIONAL_STRING),
        ("ts_us", OPTIONAL_INT64),
        ("ts_ns", OPTIONAL_INT64),
        ("schema", Schema(SchemaType.STRING)),
        ("table", Schema(SchemaType.STRING)),
        ("txId", OPTIONAL_INT64),
        ("lsn", OPTIONAL_INT64),
        ("xmin", OPTIONAL_INT64),
        ("origin", OPTIONAL_STRING),
        ("origin_lsn", OPTIONAL_INT64),
    ).fields,
)
TRANSACTION_SCHEMA = Schema(
    SchemaType.STRUCT,
    optional=True,
    name="event.block",
    version=1,
    fields=struct(
        ("id", Schema(SchemaType.STRING)),
        ("total_order", Schema(SchemaType.INT64)),
        ("data_collection_order", Schema(SchemaType.INT64)),
    ).fields,
)


_NOT_IN_TOPIC_NAMES = re.compile(r"[^A-Za-z0-9._-]")


def topic_name(prefix: str, schema_name: str, table_name: str) -> str:
    """``<prefix>.<schema>.<table>`` with characters a topic cannot hold replaced by ``_``
    (as Debezium's default topic naming does); also the stem of the schema names."""
    return _NOT_IN_TOPIC_NAMES.sub("_", f"{prefix}.{schema_name}.{table_name}")


@dataclass(frozen=True, slots=True)
class Column:
    """One column as the connector sees it."""

    name: str
    type_oid: int
    typmod: int
    optional: bool


class Table:
    """A table version: its columns, key columns, replica identity and record schemas."""

    def __init__(
        self,
        prefix: str,
        schema_name: str,
        table_name: str,
        columns: Sequence[Column],
        key_columns: Sequence[str],
        replica_identity: str,
        decimal_mode: str,
        dropped: frozenset[str] = frozenset(),
        time_mode: str = "adaptive",
        binary_mode: str = "bytes",
    ) -> None:
        """``dropped``: columns left out of the rows (column.exclude/include.list); key
        columns are always kept. ``decimal_mode``, ``time_mode`` and ``binary_mode``:
        decimal/time.precision/binary.handling.mode, applied once per column here."""
        self.schema_name = schema_name
        self.table_name = table_name
        self.qualified_name = f"{schema_name}.{table_name}"
        self.topic = topic_name(prefix, schema_name, table_name)
        self.columns = tuple(columns)
        self.names = tuple(c.name for c in columns)
        self.replica_identity = replica_identity
        keep = [c.name not in dropped or c.name in key_columns for c in columns]
        fields: list[tuple[str, Schema]] = []
        specs: list[tuple[int, str, Parser | None, Any]] = []
        zeros: list[tuple[str, Any]] = []
        for index, column in enumerate(columns):
            if not keep[index]:
                continue
            schema, parser = column_type(
                column.type_oid, column.typmod, decimal_mode, time_mode, binary_mode
            )
            fields.append((column.name, schema.as_optional() if column.optional else schema))
            # text columns need no parsing: parser None
            specs.append((index, column.name, None if parser is str else parser,
                          _placeholder(schema)))
            if not column.optional and column.name not in key_columns:
                zeros.append((column.name, _zero(schema)))
        self._specs = tuple(specs)
        self._zeros = tuple(zeros)
        self.kept_names = tuple(name for name, _ in fields)
        self.value_schema = struct(*fields, name=f"{self.topic}.Value", optional=True)
        self.key_names = tuple(k for k in key_columns if k in self.kept_names)
        self.key_schema: Schema | None = (
            struct(*(f for f in fields if f[0] in self.key_names), name=f"{self.topic}.Key")
            if self.key_names
            else None
        )
        # Debezium 3.x's envelope (schema version 2): transaction right after source,
        # then op and the processing time in ms, µs and ns
        self.envelope_schema = Schema(
            SchemaType.STRUCT,
            name=f"{self.topic}.Envelope",
            version=2,
            fields=struct(
                ("before", self.value_schema),
                ("after", self.value_schema),
                ("source", SOURCE_SCHEMA),
                ("transaction", TRANSACTION_SCHEMA),
                ("op", Schema(SchemaType.STRING)),
                ("ts_ms", OPTIONAL_INT64),
                ("ts_us", OPTIONAL_INT64),
                ("ts_ns", OPTIONAL_INT64),
            ).fields,
        )

    def row(self, values: Sequence[Any]) -> dict[str, Any]:
        """Connect data of a row from its text values (None, or unchanged-TOAST markers)."""
        row: dict[str, Any] = {}
        unchanged = UNCHANGED_TOAST
        for index, name, parser, placeholder in self._specs:
            value = values[index]
            if value is None:
                row[name] = None
            elif value is unchanged:
                row[name] = placeholder
            elif parser is None:
                row[name] = value
            else:
                row[name] = parser(value)
        return row

    def key_only_row(self, values: Sequence[Any]) -> dict[str, Any]:
        """A 'K' old tuple (replica identity columns only): the other columns are null,
        or their type's zero value where the schema requires a value.

        That is Debezium's rule too: its value converters give a required column
        with no value the schema's default, else a fallback zero of the type. Our
        schemas carry no column defaults, so it is always the zero here.
        """
        row = self.row(values)
        for name, zero in self._zeros:
            if row[name] is None:
                row[name] = zero
        return row

    def key(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """The key struct of a row (None for a table without a primary key)."""
        if not self.key_names:
            return None
        return {name: row[name] for name in self.key_names}

    def same_shape(self, other: Table) -> bool:
        return self.columns == other.columns and self.key_names == other.key_names


_ZEROS: dict[SchemaType, Any] = {
    SchemaType.INT8: 0, SchemaType.INT16: 0, SchemaType.INT32: 0, SchemaType.INT64: 0,
    SchemaType.FLOAT32: 0.0, SchemaType.FLOAT64: 0.0, SchemaType.BOOLEAN: False,
    SchemaType.STRING: "", SchemaType.BYTES: b"",
}

# the epoch for named types: Connect's logical types (time.precision.mode=connect) in
# their Python types, Debezium's zoned strings as its fallback values write them
_NAMED_ZEROS: dict[str, Any] = {
    CONNECT_DATE: dt.date(1970, 1, 1),
    CONNECT_TIME: dt.time(0),
    CONNECT_TIMESTAMP: dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
    ZONED_TIMESTAMP: "1970-01-01T00:00:00Z",
    ZONED_TIME: "00:00:00Z",
}


def _zero(schema: Schema) -> Any:
    """The value a required field gets when the server did not send it."""
    if schema.name == DECIMAL:
        return Decimal(0)
    named_zero = _NAMED_ZEROS.get(schema.name or "")
    if named_zero is not None:
        return named_zero
    if schema.type is SchemaType.ARRAY:
        return []
    if schema.type is SchemaType.STRUCT:  # VariableScaleDecimal
        return {"scale": 0, "value": b"\x00"}
    return _ZEROS[schema.type]


def _placeholder(schema: Schema) -> Any:
    """Debezium's stand-in for an unchanged TOASTed value of this type."""
    if schema.type is SchemaType.STRING:
        return UNAVAILABLE
    if schema.type is SchemaType.BYTES and schema.name is None:
        return UNAVAILABLE.encode()
    element = schema.value_schema
    if schema.type is SchemaType.ARRAY and element and element.type is SchemaType.STRING:
        return [UNAVAILABLE]
    return None
