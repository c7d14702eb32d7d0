"""One table (or query) read in the source's mode, from its stored offset onward.

Each round is one query, streamed through a cursor a batch at a time (a
psycopg named cursor on PostgreSQL, i.e. ``DECLARE ... CURSOR`` + ``FETCH
FORWARD batch.max.rows``; sqlite3 steps its cursor lazily), so a table of any
size is read in bounded memory. Queries per mode (``inc``/``ts`` the columns,
``end`` = now - ``timestamp.delay.interval.ms``)::

    bulk                    SELECT cols FROM t
    incrementing            ... WHERE inc > :inc ORDER BY inc
    timestamp               ... WHERE ts > :ts AND ts < :end ORDER BY ts
    timestamp+incrementing  ... WHERE ts < :end AND ((ts = :ts AND inc > :inc) OR ts > :ts)
                                ORDER BY ts, inc

Offsets are Confluent's: partition ``{"table": name}`` (``{"query": "query"}``),
offset ``{"incrementing": n, "timestamp": ms, "timestamp_nanos": ns}`` with only
the keys the mode uses (``timestamp_nanos`` = nanoseconds within the second).
A query is wrapped as ``SELECT * FROM (query) AS q WHERE ...``. Without a stored
offset ``:ts`` is ``timestamp.initial`` (epoch ms; -1: the time the task started),
else the epoch.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from connectors.api import DataError, Schema, SchemaType, SourceRecord, source_records, struct
from connectors.jdbc.config import TIMESTAMP_INITIAL_NOW, JdbcSourceConfig
from connectors.jdbc.dialect import Column, Dialect, TableId
from connectors.jdbc.sqlite import sqlite_reader
from connectors.jdbc.types import (
    PG_TEXT_TYPES,
    infer_schema,
    map_numeric,
    pg_column_schema,
)
from connectors.jdbc.url import DialectName

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_CURSOR_IDS = itertools.count()
_PG_TEXT_PREFIXES = tuple(PG_TEXT_TYPES)


def to_offset_ts(value: dt.datetime) -> tuple[int, int]:
    """(ms since the epoch, nanoseconds within the second) of a timestamp (naive = UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - EPOCH
    seconds = delta.days * 86_400 + delta.seconds
    return seconds * 1000 + delta.microseconds // 1000, delta.microseconds * 1000


def from_offset_ts(ms: int, nanos: int | None) -> dt.datetime:
    seconds = ms // 1000
    micros = nanos // 1000 if nanos is not None else (ms % 1000) * 1000
    return EPOCH + dt.timedelta(seconds=seconds, microseconds=micros)


def initial_timestamp(initial_ms: int | None) -> dt.datetime:
    """Where a table without a stored offset starts (``timestamp.initial``; -1: now)."""
    if initial_ms is None:
        return EPOCH
    if initial_ms == TIMESTAMP_INITIAL_NOW:
        return dt.datetime.now(dt.UTC)
    return from_offset_ts(initial_ms, None)


class Querier:
    """Reads one table or query; remembers where it got to."""

    def __init__(
        self,
        dialect: Dialect,
        config: JdbcSourceConfig,
        *,
        table: TableId | None = None,
        query: str | None = None,
        stored: dict[str, Any] | None = None,
    ) -> None:
        assert (table is None) != (query is None), "a table or a query"
        self.dialect, self.config, self.table, self.query = dialect, config, table, query
        self.name = str(table) if table is not None else "query"
        self.partition: dict[str, Any] = (
            {"table": str(table)} if table is not None else {"query": "query"}
        )
        prefix = config.topic_prefix
        self.topic = prefix + str(table) if table is not None else prefix
        self.mode = config.mode
        stored = stored or {}
        self.incrementing: int = int(stored.get("incrementing", -1))
        self.timestamp: dt.datetime = (
            from_offset_ts(int(stored.get("timestamp", 0)), stored.get("timestamp_nanos"))
            if "timestamp" in stored else initial_timestamp(config.timestamp_initial)
        )
        self.rows_read = 0
        self.next_run = 0.0
        self._cursor: Any = None
        self._schema: Schema | None = None

    @property
    def active(self) -> bool:
        return self._cursor is not None

    # ------------------------------------------------------------ one round

    def open(self, conn: Any) -> None:
        """Run this round's query (in the connection's open transaction)."""
        declared = self._columns(conn)
        mapping = self.config.numeric_mapping
        columns = [replace(c, schema=map_numeric(c.schema, mapping)) for c in declared]
        names = [c.name for c in columns]
        self._names = tuple(names)
        self._schema = struct(*[(c.name, c.schema) for c in columns], name=self.name)
        self._readers = self._make_readers(declared, columns)
        fold = self.dialect.fold  # quote.sql.identifiers=never: ID is column id
        self._inc_index = self._index(names, fold(self.config.incrementing_column_name))
        self._ts_index = self._index(names, fold(self.config.timestamp_column_name))
        sql, params = self._sql(columns)
        if self.dialect.name is DialectName.POSTGRESQL:
            cursor = conn.cursor(name=f"sluice_jdbc_{next(_CURSOR_IDS)}")
            cursor.itersize = self.config.batch_max_rows
        else:
            cursor = conn.cursor()
        cursor.execute(sql, params)
        self._cursor = cursor

    def fetch(self) -> list[SourceRecord]:
        """The next batch; [] (and the cursor closed) when this round is over."""
        cursor = self._cursor
        assert cursor is not None and self._schema is not None
        rows = cursor.fetchmany(self.config.batch_max_rows)
        if not rows:
            self.close()
            return []
        records = self._records(rows)
        self.rows_read += len(records)
        if len(rows) < self.config.batch_max_rows:
            self.close()
        return records

    def close(self) -> None:
        cursor, self._cursor = self._cursor, None
        if cursor is not None:
            with contextlib.suppress(Exception):  # the transaction ends right after anyway
                cursor.close()

    # ------------------------------------------------------------ records

    def _records(self, rows: list[Any]) -> list[SourceRecord]:
        """Records for ``rows``; only the batch's last record carries the offset.

        The runtime stores the newest offset among acknowledged records, so an offset
        per batch is enough (a crash re-reads at most one batch) and saves a dict and a
        timestamp conversion per row. Every record keeps the partition.
        """
        names, schema, topic = self._names, self._schema, self.topic
        partition = self.partition if self.mode != "bulk" else None
        readers = self._readers
        if readers:
            rows = [self._read(row, readers) for row in rows]
        out = source_records(
            topic, [dict(zip(names, row, strict=False)) for row in rows], value_schema=schema,
            source_partition=partition,
        )
        if partition is not None:
            offset = self._offset(rows[-1])
            out[-1] = out[-1].replace(source_offset=offset)
        return out

    @staticmethod
    def _read(row: Any, readers: list[tuple[int, Callable[[Any], Any]]]) -> list[Any]:
        row = list(row)
        for i, read in readers:
            if row[i] is not None:
                row[i] = read(row[i])
        return row

    def _offset(self, row: Any) -> dict[str, Any]:
        """The offset just after ``row`` (and remember it for the next round's query)."""
        if self.mode == "incrementing":
            self.incrementing = row[self._inc_index]
            return {"incrementing": self.incrementing}
        self.timestamp = row[self._ts_index]
        ms, nanos = to_offset_ts(self.timestamp)
        offset: dict[str, Any] = {"timestamp": ms, "timestamp_nanos": nanos}
        if self.mode == "timestamp+incrementing":
            self.incrementing = row[self._inc_index]
            offset["incrementing"] = self.incrementing
        return offset

    # ------------------------------------------------------------ SQL

    def _columns(self, conn: Any) -> list[Column]:
        """The columns read, with the Connect schemas of their declared types."""
        if self.table is not None:
            columns = self.dialect.columns(conn, self.table)
            if columns is None:
                raise DataError(f"table {self.table} does not exist (any more)")
            return columns
        return self._query_columns(conn)

    def _query_columns(self, conn: Any) -> list[Column]:
        cursor = conn.cursor()
        if self.dialect.name is DialectName.POSTGRESQL:
            cursor.execute(f"SELECT * FROM ({self.query}) AS q LIMIT 0")
            columns = []
            for d in cursor.description:
                info = conn.adapters.types.get(d.type_code)
                type_name = _PG_BY_SHORT.get(info.name if info else "", "text")
                scale = d.scale if type_name == "numeric" else None
                schema = pg_column_schema(type_name, d.precision, scale, True)
                columns.append(Column(d.name, schema, type_name))
            cursor.close()
            return columns
        cursor.execute(f"SELECT * FROM ({self.query}) AS q LIMIT 1")
        first = cursor.fetchone()
        names = [d[0] for d in cursor.description]
        cursor.close()
        samples = first if first is not None else [None] * len(names)
        return [Column(n, infer_schema(v), "") for n, v in zip(names, samples, strict=True)]

    def _make_readers(
        self, declared: list[Column], columns: list[Column]
    ) -> list[tuple[int, Callable[[Any], Any]]]:
        """Per column read, a conversion of the driver's value, where one is needed;
        ``declared`` are the columns before ``numeric.mapping``, ``columns`` after."""
        readers: list[tuple[int, Callable[[Any], Any]]] = []
        sqlite = self.dialect.name is DialectName.SQLITE
        for i, (before, column) in enumerate(zip(declared, columns, strict=True)):
            read: Callable[[Any], Any] | None
            if column.schema is not before.schema:  # a Decimal that numeric.mapping mapped
                first = sqlite_reader(before.schema) if sqlite else None
                read = _numeric_reader(column.schema.type, first)
            elif sqlite:
                read = sqlite_reader(column.schema)
            elif self.query is not None and column.schema.type is SchemaType.STRING:
                read = str
            elif column.schema.type is SchemaType.FLOAT64 and column.sql_type == "numeric":
                read = float
            else:
                read = None
            if read is not None:
                readers.append((i, read))
        return readers

    def _select_list(self, columns: list[Column]) -> str:
        quote = self.dialect.quote
        if self.query is not None:
            return "*"
        parts = []
        for c in columns:
            if (
                self.dialect.name is DialectName.POSTGRESQL
                and c.schema.type is SchemaType.STRING
                and not c.sql_type.startswith(_PG_TEXT_PREFIXES)
            ):
                parts.append(f"{quote(c.name)}::text AS {quote(c.name)}")
            else:
                parts.append(quote(c.name))
        return ", ".join(parts)

    def _sql(self, columns: list[Column]) -> tuple[str, tuple[Any, ...]]:
        source = (
            self.dialect.table_sql(self.table) if self.table is not None
            else f"({self.query}) AS q"
        )
        sql = f"SELECT {self._select_list(columns)} FROM {source}"
        mark, quote = self.dialect.placeholder, self.dialect.quote
        inc = quote(self.config.incrementing_column_name)
        ts = quote(self.config.timestamp_column_name)
        if self.mode == "bulk":
            return sql, ()
        if self.mode == "incrementing":
            return f"{sql} WHERE {inc} > {mark} ORDER BY {inc} ASC", (self.incrementing,)
        end = self._param_ts(
            dt.datetime.now(dt.UTC)
            - dt.timedelta(milliseconds=self.config.timestamp_delay_interval_ms)
        )
        start = self._param_ts(self.timestamp)
        if self.mode == "timestamp":
            return (
                f"{sql} WHERE {ts} > {mark} AND {ts} < {mark} ORDER BY {ts} ASC",
                (start, end),
            )
        return (
            f"{sql} WHERE {ts} < {mark} AND (({ts} = {mark} AND {inc} > {mark}) OR {ts} > {mark})"
            f" ORDER BY {ts} ASC, {inc} ASC",
            (end, start, self.incrementing, start),
        )

    def _param_ts(self, value: dt.datetime) -> Any:
        if self.dialect.name is DialectName.SQLITE:
            return value.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
        return value

    @staticmethod
    def _index(names: list[str], column: str) -> int:
        if not column:
            return -1
        if column not in names:
            raise DataError(f"column {column} is not in the result (columns: {names})")
        return names.index(column)


_PG_BY_SHORT = {
    "int2": "smallint", "int4": "integer", "int8": "bigint", "float4": "real",
    "float8": "double precision", "bool": "boolean", "bytea": "bytea", "numeric": "numeric",
    "date": "date", "time": "time without time zone",
    "timestamp": "timestamp without time zone", "timestamptz": "timestamp with time zone",
    "text": "text", "varchar": "character varying", "bpchar": "character",
}


def _numeric_reader(
    kind: SchemaType, first: Callable[[Any], Any] | None
) -> Callable[[Any], Any]:
    """Read a numeric column mapped to an int or a double (after the dialect's reader)."""
    convert: Callable[[Any], Any] = float if kind is SchemaType.FLOAT64 else int
    if first is None:
        return convert
    return lambda value: None if (decimal := first(value)) is None else convert(decimal)
