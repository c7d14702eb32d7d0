"""What differs between the databases: connecting, naming, metadata, SQL shapes.

A :class:`Dialect` is stateless apart from its :class:`~connectors.jdbc.url.JdbcUrl`;
connections are plain DB-API connections (psycopg 3 or :mod:`sqlite3`) opened
by :meth:`Dialect.connect`, which turns a failure into a ConnectError whose
message says what went wrong (wrong password, host unreachable, no such file).
Errors raised while working are sorted by :meth:`Dialect.classify`: a row that
does not fit (SQLSTATE classes 22 and 23, a type mismatch) is a DataError, a
lost connection or a lock timeout is retriable, anything else fails the task.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from connectors.api import ConnectError, Schema
from connectors.jdbc.url import DialectName, JdbcUrl

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TableId:
    """A table, optionally in a schema (PostgreSQL); printed as ``schema.table``."""

    schema: str | None
    name: str

    @classmethod
    def parse(cls, text: str) -> TableId:
        """``table``, ``schema.table`` or ``a.schema.table`` (leading parts dropped)."""
        parts = [p.strip('"') for p in text.split(".") if p]
        if not parts:
            raise ValueError("empty table name")
        return cls(parts[-2] if len(parts) > 1 else None, parts[-1])

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


@dataclass(frozen=True, slots=True)
class Column:
    """A column as read from the catalog: its name, Connect schema and SQL type."""

    name: str
    schema: Schema
    sql_type: str
    is_pk: bool = False


class Dialect(ABC):
    """One database family's connection and SQL conventions."""

    name: DialectName
    placeholder = "?"

    def __init__(self, url: JdbcUrl, *, quote_identifiers: bool = True) -> None:
        self.url = url
        self.quote_identifiers = quote_identifiers  # quote.sql.identifiers=always

    @abstractmethod
    def connect(self, *, autocommit: bool = False, create: bool = True) -> Any:
        """A new connection; ConnectError with a clear reason when it fails.

        ``create=False``: an embedded database file must exist already (sources).
        """

    @abstractmethod
    def begin(self, conn: Any) -> None:
        """Start a transaction on ``conn`` (explicitly, where the driver needs it)."""

    def quote(self, identifier: str) -> str:
        """``identifier`` as written in SQL: double-quoted, or bare (``quote.sql.identifiers``
        = never; the database then folds it as it does unquoted names)."""
        if not self.quote_identifiers:
            return identifier
        return '"' + identifier.replace('"', '""') + '"'

    def fold(self, identifier: str) -> str:
        """The name the catalog holds for ``identifier`` as :meth:`quote` writes it
        (PostgreSQL lower-cases bare names; quoted names and SQLite keep theirs)."""
        return identifier

    def table_sql(self, table: TableId) -> str:
        if table.schema and self.name is DialectName.POSTGRESQL:
            return f"{self.quote(table.schema)}.{self.quote(table.name)}"
        return self.quote(table.name)

    @abstractmethod
    def list_tables(
        self, conn: Any, types: Collection[str] = ("TABLE",), schema_pattern: str = ""
    ) -> list[TableId]:
        """The user relations of ``types`` (``TABLE``, ``VIEW``, ``MATERIALIZED VIEW``: the
        source's ``table.types``) that ``conn`` sees; a type the database lacks lists nothing.
        ``schema_pattern`` (SQL LIKE; empty: all) keeps the schemas matching it, where the
        database has schemas (SQLite has none and ignores it)."""

    @abstractmethod
    def columns(self, conn: Any, table: TableId) -> list[Column] | None:
        """The table's columns in order, or None when it does not exist."""

    @abstractmethod
    def sql_type(self, schema: Schema) -> str:
        """The column type to create for ``schema``."""

    @abstractmethod
    def classify(self, exc: BaseException) -> type[ConnectError]:
        """DataError, RetriableError or ConnectError for an exception of the driver."""

    @abstractmethod
    def is_driver_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` comes from the database driver."""

    # ----------------------------------------------------------- DDL

    def create_table_sql(
        self, table: TableId, columns: Sequence[tuple[str, Schema]], pk: Sequence[str]
    ) -> str:
        lines = []
        for name, schema in columns:
            null = "NULL" if schema.optional and name not in pk else "NOT NULL"
            lines.append(f"{self.quote(name)} {self.sql_type(schema)} {null}")
        if pk:
            lines.append(f"PRIMARY KEY ({', '.join(self.quote(c) for c in pk)})")
        return f"CREATE TABLE {self.table_sql(table)} (\n  " + ",\n  ".join(lines) + "\n)"

    def add_column_sql(self, table: TableId, name: str, schema: Schema) -> str:
        return (
            f"ALTER TABLE {self.table_sql(table)} ADD COLUMN "
            f"{self.quote(name)} {self.sql_type(schema)} NULL"
        )

    # ----------------------------------------------------------- DML

    def insert_sql(self, table: TableId, columns: Sequence[str]) -> str:
        names = ", ".join(self.quote(c) for c in columns)
        marks = ", ".join([self.placeholder] * len(columns))
        return f"INSERT INTO {self.table_sql(table)} ({names}) VALUES ({marks})"

    def upsert_sql(self, table: TableId, columns: Sequence[str], pk: Sequence[str]) -> str:
        """``INSERT ... ON CONFLICT (pk) DO UPDATE`` (PostgreSQL, SQLite >= 3.24)."""
        others = [c for c in columns if c not in pk]
        keys = ", ".join(self.quote(c) for c in pk)
        if not others:
            return f"{self.insert_sql(table, columns)} ON CONFLICT ({keys}) DO NOTHING"
        sets = ", ".join(f"{self.quote(c)} = EXCLUDED.{self.quote(c)}" for c in others)
        return f"{self.insert_sql(table, columns)} ON CONFLICT ({keys}) DO UPDATE SET {sets}"

    def update_sql(self, table: TableId, columns: Sequence[str], pk: Sequence[str]) -> str:
        """``UPDATE``; parameters: the non-key columns, then the key columns."""
        others = [c for c in columns if c not in pk]
        sets = ", ".join(f"{self.quote(c)} = {self.placeholder}" for c in others)
        return f"UPDATE {self.table_sql(table)} SET {sets} WHERE {self._where(pk)}"

    def delete_sql(self, table: TableId, pk: Sequence[str]) -> str:
        return f"DELETE FROM {self.table_sql(table)} WHERE {self._where(pk)}"

    def _where(self, pk: Sequence[str]) -> str:
        return " AND ".join(f"{self.quote(c)} = {self.placeholder}" for c in pk)

    def insert_rows(
        self, conn: Any, table: TableId, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        """Insert many rows (PostgreSQL overrides this with COPY)."""
        conn.cursor().executemany(self.insert_sql(table, columns), list(rows))

    def execute_many(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn.cursor().executemany(sql, rows)

    def adapt(self, schema: Schema | None) -> Any:
        """A function turning a Connect value into a driver parameter, or None if none is needed."""
        return None


def dialect_for(url: JdbcUrl, *, quote_identifiers: bool = True) -> Dialect:
    """The dialect for a parsed ``connection.url`` (``quote_identifiers``: see :meth:`quote`)."""
    if url.dialect is DialectName.POSTGRESQL:
        from connectors.jdbc.postgres import PostgresDialect

        return PostgresDialect(url, quote_identifiers=quote_identifiers)
    from connectors.jdbc.sqlite import SqliteDialect

    return SqliteDialect(url, quote_identifiers=quote_identifiers)


def wrap_error(dialect: Dialect, exc: BaseException, doing: str) -> ConnectError:
    """The API exception for a driver error met while ``doing`` something."""
    kind = dialect.classify(exc)
    message = f"{doing} failed on {dialect.url.describe()}: {type(exc).__name__}: {exc}".strip()
    return kind(message)


def close_quietly(conn: Any) -> None:
    """Close a DB-API connection being given up (after an error, at stop); a failing close
    is logged, not raised: the connection is gone either way."""
    if conn is None:
        return
    try:
        conn.close()
    except Exception:
        log.debug("closing a JDBC connection failed", exc_info=True)
