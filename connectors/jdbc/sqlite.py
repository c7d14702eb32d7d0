"""The SQLite dialect, through the standard library's :mod:`sqlite3` (no server).

Connections run in autocommit mode with explicit ``BEGIN``; the sink opens
(and creates) the file, the source opens an existing file only, so a wrong
path is an error rather than an empty database. SQLite has no date, time or
decimal storage class: the sink writes them as ISO 8601 text and decimal text
(NUMERIC affinity turns that into a number), and the source parses them back
according to the declared column type.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Collection
from decimal import Decimal
from pathlib import Path
from typing import Any

from connectors.api import ConnectError, DataError, RetriableError, Schema
from connectors.jdbc.dialect import Column, Dialect, TableId
from connectors.jdbc.types import (
    DATE,
    DECIMAL,
    TIME,
    TIMESTAMP,
    sqlite_column_schema,
    sqlite_sql_type,
)
from connectors.jdbc.url import DialectName

LOCK_TIMEOUT_S = 5.0
_SQLITE_KINDS = {"TABLE": "table", "VIEW": "view"}  # table.types -> sqlite_master.type


def _to_text(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


class SqliteDialect(Dialect):
    """SQLite 3 (``?`` parameters, executemany for everything)."""

    name = DialectName.SQLITE

    def connect(self, *, autocommit: bool = False, create: bool = True) -> sqlite3.Connection:
        path = self.url.target
        try:
            if create or path == ":memory:":
                if path != ":memory:":
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    path, isolation_level=None, check_same_thread=False, timeout=LOCK_TIMEOUT_S
                )
            else:
                conn = sqlite3.connect(
                    f"file:{path}?mode=rw", uri=True, isolation_level=None,
                    check_same_thread=False, timeout=LOCK_TIMEOUT_S,
                )
            conn.execute("SELECT 1")
        except (sqlite3.Error, OSError) as exc:
            raise ConnectError(f"cannot open {self.url.describe()}: {exc}") from None
        return conn

    def begin(self, conn: Any) -> None:
        if not conn.in_transaction:
            conn.execute("BEGIN")

    def list_tables(
        self, conn: Any, types: Collection[str] = ("TABLE",), schema_pattern: str = ""
    ) -> list[TableId]:
        """SQLite has no schemas: ``schema_pattern`` is ignored."""
        kinds = [_SQLITE_KINDS[t] for t in types if t in _SQLITE_KINDS]  # no materialized views
        if not kinds:
            return []
        marks = ", ".join("?" * len(kinds))
        rows = conn.execute(
            f"SELECT name FROM sqlite_master WHERE type IN ({marks}) "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name",
            kinds,
        ).fetchall()
        return [TableId(None, name) for (name,) in rows]

    def columns(self, conn: Any, table: TableId) -> list[Column] | None:
        rows = conn.execute(f"PRAGMA table_info({self.quote(table.name)})").fetchall()
        if not rows:
            return None
        return [
            Column(name, sqlite_column_schema(decl or "", not notnull and not pk), decl, bool(pk))
            for _cid, name, decl, notnull, _default, pk in rows
        ]

    def sql_type(self, schema: Schema) -> str:
        return sqlite_sql_type(schema)

    def adapt(self, schema: Schema | None) -> Callable[[Any], Any] | None:
        return _to_text

    def classify(self, exc: BaseException) -> type[ConnectError]:
        if isinstance(exc, sqlite3.IntegrityError | sqlite3.InterfaceError | sqlite3.DataError):
            return DataError
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return RetriableError
        return ConnectError

    def is_driver_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error)


def sqlite_reader(schema: Schema) -> Callable[[Any], Any] | None:
    """A function turning what sqlite3 returns into Connect data of ``schema``, if needed."""
    if schema.name == TIMESTAMP:
        return _read_timestamp
    if schema.name == DATE:
        return lambda v: dt.date.fromisoformat(v) if isinstance(v, str) else v
    if schema.name == TIME:
        return lambda v: dt.time.fromisoformat(v) if isinstance(v, str) else v
    if schema.name == DECIMAL:
        return lambda v: None if v is None else Decimal(str(v))
    if schema.type.value == "boolean":
        return lambda v: None if v is None else bool(v)
    if schema.type.value == "double":
        return lambda v: None if v is None else float(v)
    return None


def _read_timestamp(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    parsed = dt.datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
