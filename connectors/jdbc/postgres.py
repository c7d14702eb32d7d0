"""The PostgreSQL dialect, through psycopg 3.

Sessions run with ``TimeZone=UTC`` so ``timestamp without time zone`` values
are read and written as UTC (as Confluent's ``db.timezone`` default). Inserts
use ``COPY ... FROM STDIN`` (one round trip per batch, rows encoded by
psycopg's C code); upserts, updates and deletes use ``executemany``, which
psycopg 3 pipelines.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from connectors.api import ConnectError, DataError, RetriableError, Schema
from connectors.jdbc.dialect import Column, Dialect, TableId
from connectors.jdbc.types import pg_column_schema, pg_sql_type
from connectors.jdbc.url import DialectName

_DATA_STATES = ("22", "23")
_DATA_CODES = frozenset({"42804"})  # datatype_mismatch: a value of the wrong type
_RETRIABLE_STATES = ("08", "40", "53", "57")

_COLUMNS_SQL = """
SELECT c.column_name, c.data_type, c.numeric_precision, c.numeric_scale,
       c.is_nullable = 'YES', format_type(a.atttypid, a.atttypmod)
FROM information_schema.columns c
JOIN pg_attribute a
  ON a.attrelid = format('%%I.%%I', c.table_schema, c.table_name)::regclass
 AND a.attname = c.column_name
WHERE c.table_schema = %s AND c.table_name = %s
ORDER BY c.ordinal_position
"""
_PK_SQL = """
SELECT a.attname FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = %s::regclass AND i.indisprimary
ORDER BY array_position(i.indkey, a.attnum)
"""
# Relations the user may read, of the relkinds asked for (pgjdbc's table types).
_TABLES_SQL = """
SELECT n.nspname, c.relname FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = ANY(%s)
  AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%%'
  AND has_table_privilege(c.oid, 'SELECT')
  AND (%s::text = '' OR n.nspname LIKE %s::text)
ORDER BY n.nspname, c.relname
"""
# PostgreSQL lower-cases A-Z only in bare identifiers (downcase_identifier, UTF-8 database).
_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_RELKINDS = {
    "TABLE": ("r",), "VIEW": ("v",), "MATERIALIZED VIEW": ("m",), "PARTITIONED TABLE": ("p",),
}
# information_schema.columns leaves materialized views out: read those from the catalog
# (format_type without the modifier gives the same type names).
_MATVIEW_COLUMNS_SQL = """
SELECT a.attname, format_type(a.atttypid, NULL),
       CASE WHEN a.atttypid = 'numeric'::regtype AND a.atttypmod >= 4
            THEN ((a.atttypmod - 4) >> 16) & 65535 END,
       CASE WHEN a.atttypid = 'numeric'::regtype AND a.atttypmod >= 4
            THEN (a.atttypmod - 4) & 65535 END,
       NOT a.attnotnull, format_type(a.atttypid, a.atttypmod)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relname = %s AND c.relkind = 'm'
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""


class PostgresDialect(Dialect):
    """PostgreSQL via psycopg 3 (``%s`` parameters, COPY for inserts)."""

    name = DialectName.POSTGRESQL
    placeholder = "%s"

    def connect(
        self, *, autocommit: bool = False, create: bool = True
    ) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(
                self.url.target,
                user=self.url.user,
                password=self.url.password,
                autocommit=True,
            )
        except psycopg.Error as exc:
            raise ConnectError(
                f"cannot connect to {self.url.describe()}: {str(exc).strip()}"
            ) from None
        conn.execute("SET TIME ZONE 'UTC'")
        conn.autocommit = autocommit
        return conn

    def begin(self, conn: Any) -> None:
        """psycopg opens a transaction at the first statement (autocommit off)."""

    def fold(self, identifier: str) -> str:
        return identifier if self.quote_identifiers else identifier.translate(_FOLD)

    def list_tables(
        self, conn: Any, types: Collection[str] = ("TABLE",), schema_pattern: str = ""
    ) -> list[TableId]:
        kinds = [k for t in types for k in _RELKINDS.get(t, ())]
        if not kinds:
            return []
        rows = conn.execute(_TABLES_SQL, (kinds, schema_pattern, schema_pattern)).fetchall()
        return [TableId(None if s == "public" else s, t) for s, t in rows]

    def columns(self, conn: Any, table: TableId) -> list[Column] | None:
        where = (self.fold(table.schema or "public"), self.fold(table.name))
        rows = conn.execute(_COLUMNS_SQL, where).fetchall()
        if not rows:
            rows = conn.execute(_MATVIEW_COLUMNS_SQL, where).fetchall()
        if not rows:
            return None
        pk = {r[0] for r in conn.execute(_PK_SQL, (self.table_sql(table),)).fetchall()}
        return [
            Column(
                name, pg_column_schema(data_type, precision, scale, nullable), sql_type,
                name in pk,
            )
            for name, data_type, precision, scale, nullable, sql_type in rows
        ]

    def sql_type(self, schema: Schema) -> str:
        return pg_sql_type(schema)

    def insert_rows(
        self, conn: Any, table: TableId, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        names = ", ".join(self.quote(c) for c in columns)
        with conn.cursor().copy(f"COPY {self.table_sql(table)} ({names}) FROM STDIN") as copy:
            write_row = copy.write_row
            for row in rows:
                write_row(row)

    def classify(self, exc: BaseException) -> type[ConnectError]:
        state = getattr(exc, "sqlstate", None) or ""
        if state.startswith(_DATA_STATES) or state in _DATA_CODES:
            return DataError
        if isinstance(exc, pg_errors.ProgrammingError) and not state:
            return DataError  # psycopg could not adapt a Python value
        if state.startswith(_RETRIABLE_STATES) or (
            isinstance(exc, psycopg.OperationalError) and not state
        ):
            return RetriableError
        return ConnectError

    def is_driver_error(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.Error)
