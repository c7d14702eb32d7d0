"""Column types <-> Kafka Connect schemas, for both dialects.

Reading (source): a column's declared type becomes a Connect schema, optional
when the column is nullable. Logical types keep Kafka's names so a JDBC sink
(or any Connect consumer) can create the same column again:

=====================================  ===========================================
PostgreSQL                             Connect
=====================================  ===========================================
smallint / integer / bigint            int16 / int32 / int64
real / double precision                float / double
boolean                                boolean
numeric(p, s)                          Decimal (bytes, ``scale`` = s,
                                       ``connect.decimal.precision`` = p)
numeric (no scale declared)            double (as Confluent's ``best_fit``)
numeric(p, s) with ``numeric.mapping``  int8/16/32/64 or double: :func:`map_numeric`
date / time / timestamp[tz]            Date / Time / Timestamp (UTC instants)
bytea                                  bytes
text, varchar, char, uuid, json, ...   string (anything else is read as text)
=====================================  ===========================================

SQLite columns map by their declared type's affinity (INT -> int64, REAL/FLOA/
DOUB -> double, BLOB -> bytes, BOOL -> boolean, DECIMAL/NUMERIC(p,s) ->
Decimal, DATE/TIME/TIMESTAMP/DATETIME -> the logical types, the rest string).

Writing (sink, ``auto.create``/``auto.evolve``): the reverse, with Timestamp
as ``timestamptz`` on PostgreSQL (Connect timestamps are UTC instants) and
SQLite's storage classes (dates and times as ISO 8601 text).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from connectors.api import DataError, Schema, SchemaType

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
PRECISION_PARAM = "connect.decimal.precision"

_PG_SIMPLE: dict[str, Schema] = {
    "smallint": Schema(SchemaType.INT16),
    "integer": Schema(SchemaType.INT32),
    "bigint": Schema(SchemaType.INT64),
    "real": Schema(SchemaType.FLOAT32),
    "double precision": Schema(SchemaType.FLOAT64),
    "boolean": Schema(SchemaType.BOOLEAN),
    "bytea": Schema(SchemaType.BYTES),
    "date": Schema(SchemaType.INT32, name=DATE, version=1),
    "time without time zone": Schema(SchemaType.INT32, name=TIME, version=1),
    "timestamp without time zone": Schema(SchemaType.INT64, name=TIMESTAMP, version=1),
    "timestamp with time zone": Schema(SchemaType.INT64, name=TIMESTAMP, version=1),
}
# Types psycopg returns as Python objects the Connect STRING type does not hold.
PG_TEXT_TYPES = frozenset(
    {"text", "character varying", "character", "name", '"char"', "citext"}
)


def decimal_schema(precision: int | None, scale: int, optional: bool = False) -> Schema:
    params = {"scale": str(scale)}
    if precision:
        params[PRECISION_PARAM] = str(precision)
    return Schema(SchemaType.BYTES, optional=optional, name=DECIMAL, version=1, parameters=params)


def pg_column_schema(
    data_type: str, precision: int | None, scale: int | None, nullable: bool
) -> Schema:
    """The Connect schema of a PostgreSQL column (``information_schema`` type names)."""
    if data_type == "numeric":
        if scale is None:
            return Schema(SchemaType.FLOAT64, optional=nullable)
        return decimal_schema(precision, scale, nullable)
    base = _PG_SIMPLE.get(data_type, Schema(SchemaType.STRING))
    return Schema(
        base.type, optional=nullable, name=base.name, version=base.version,
        parameters=base.parameters,
    )


def map_numeric(schema: Schema, mapping: str) -> Schema:
    """A Decimal column's schema under the JDBC source's ``numeric.mapping`` (Confluent's).

    ``precision_only``: scale 0 and precision below 19 -> the smallest of int8/16/32/64
    holding that many digits; ``best_fit``: the same for scale <= 0, double for a
    scale above 0, both only for precision below 19; ``best_fit_eager_double``:
    double for any scale above 0, ints as ``best_fit``. Anything else, and ``none``,
    keeps the Decimal. Other schemas are returned as they are.
    """
    if schema.name != DECIMAL or mapping == "none":
        return schema
    params = schema.parameters or {}
    precision = int(params.get(PRECISION_PARAM) or 0)
    scale = int(params.get("scale", "0"))
    if not precision:
        return schema  # no declared precision: nothing to fit
    kind: SchemaType | None = None
    if mapping == "best_fit_eager_double" and scale > 0:
        kind = SchemaType.FLOAT64
    elif precision < 19:
        if scale <= 0 and (scale == 0 or mapping != "precision_only"):
            kind = _int_for_precision(precision)
        elif scale > 0 and mapping in ("best_fit", "best_fit_eager_double"):
            kind = SchemaType.FLOAT64
    if kind is None:
        return schema
    return Schema(kind, optional=schema.optional)


def _int_for_precision(precision: int) -> SchemaType:
    if precision > 9:
        return SchemaType.INT64
    if precision > 4:
        return SchemaType.INT32
    if precision > 2:
        return SchemaType.INT16
    return SchemaType.INT8


_SQLITE_DECIMAL = re.compile(r"(?:DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")


def sqlite_column_schema(declared: str, nullable: bool) -> Schema:
    """The Connect schema of a SQLite column from its declared type."""
    text = declared.upper()
    match = _SQLITE_DECIMAL.search(text)
    if match:
        return decimal_schema(int(match.group(1)), int(match.group(2) or 0), nullable)
    for needle, schema in _SQLITE_RULES:
        if needle in text:
            return schema.as_optional() if nullable else schema
    return Schema(SchemaType.STRING, optional=nullable)


_SQLITE_RULES: tuple[tuple[str, Schema], ...] = (
    ("BOOL", Schema(SchemaType.BOOLEAN)),
    ("TIMESTAMP", Schema(SchemaType.INT64, name=TIMESTAMP, version=1)),
    ("DATETIME", Schema(SchemaType.INT64, name=TIMESTAMP, version=1)),
    ("DATE", Schema(SchemaType.INT32, name=DATE, version=1)),
    ("TIME", Schema(SchemaType.INT32, name=TIME, version=1)),
    ("INT", Schema(SchemaType.INT64)),
    ("CHAR", Schema(SchemaType.STRING)),
    ("CLOB", Schema(SchemaType.STRING)),
    ("TEXT", Schema(SchemaType.STRING)),
    ("BLOB", Schema(SchemaType.BYTES)),
    ("REAL", Schema(SchemaType.FLOAT64)),
    ("FLOA", Schema(SchemaType.FLOAT64)),
    ("DOUB", Schema(SchemaType.FLOAT64)),
)


# ---------------------------------------------------------------- writing


def pg_sql_type(schema: Schema) -> str:
    """The PostgreSQL column type for a Connect schema (auto.create / auto.evolve)."""
    if schema.name == DECIMAL:
        params = schema.parameters or {}
        precision, scale = params.get(PRECISION_PARAM), params.get("scale", "0")
        return f"numeric({precision},{scale})" if precision else "numeric"
    if schema.name == DATE:
        return "date"
    if schema.name == TIME:
        return "time"
    if schema.name == TIMESTAMP:
        return "timestamptz"
    sql = _PG_TYPES.get(schema.type)
    if sql is None:
        raise DataError(f"no PostgreSQL column type for a Connect {schema.type.value}")
    return sql


_PG_TYPES = {
    SchemaType.INT8: "smallint",
    SchemaType.INT16: "smallint",
    SchemaType.INT32: "integer",
    SchemaType.INT64: "bigint",
    SchemaType.FLOAT32: "real",
    SchemaType.FLOAT64: "double precision",
    SchemaType.BOOLEAN: "boolean",
    SchemaType.STRING: "text",
    SchemaType.BYTES: "bytea",
}


def sqlite_sql_type(schema: Schema) -> str:
    """The SQLite column type for a Connect schema."""
    if schema.name == DECIMAL:
        params = schema.parameters or {}
        precision = params.get(PRECISION_PARAM)
        return f"NUMERIC({precision},{params.get('scale', '0')})" if precision else "NUMERIC"
    if schema.name in (DATE, TIME, TIMESTAMP):
        return {DATE: "DATE", TIME: "TIME", TIMESTAMP: "TIMESTAMP"}[schema.name]
    if schema.type in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
        return "INTEGER"
    sql = {
        SchemaType.FLOAT32: "REAL",
        SchemaType.FLOAT64: "REAL",
        SchemaType.BOOLEAN: "BOOLEAN",
        SchemaType.STRING: "TEXT",
        SchemaType.BYTES: "BLOB",
    }.get(schema.type)
    if sql is None:
        raise DataError(f"no SQLite column type for a Connect {schema.type.value}")
    return sql


def infer_schema(value: Any) -> Schema:
    """An optional schema for a schemaless value (auto.create without schemas)."""
    kind = type(value)
    if kind is bool:
        return Schema(SchemaType.BOOLEAN, optional=True)
    if kind is int:
        return Schema(SchemaType.INT64, optional=True)
    if kind is float:
        return Schema(SchemaType.FLOAT64, optional=True)
    if isinstance(value, Decimal):
        return Schema(SchemaType.FLOAT64, optional=True)
    if isinstance(value, dt.datetime):
        return Schema(SchemaType.INT64, optional=True, name=TIMESTAMP, version=1)
    if isinstance(value, dt.date):
        return Schema(SchemaType.INT32, optional=True, name=DATE, version=1)
    if isinstance(value, bytes | bytearray | memoryview):
        return Schema(SchemaType.BYTES, optional=True)
    if value is None or isinstance(value, str):
        return Schema(SchemaType.STRING, optional=True)
    raise DataError(
        f"cannot infer a column type for a {kind.__name__} value without a schema; "
        "use a converter with schemas (JsonConverter schemas.enable=true)"
    )
