"""The consistent initial snapshot: every captured table as of the slot's creation.

The slot is created with ``SNAPSHOT 'export'`` on the replication connection;
this module imports that snapshot on a second, regular connection
(``REPEATABLE READ``, ``SET TRANSACTION SNAPSHOT``) before anything else runs
on the replication connection, and reads each table through a server-side
cursor ``snapshot.fetch.size`` rows at a time (bounded memory). Streaming then
starts at the slot's consistent point, so each change is either in the
snapshot or in the stream, never both and never neither.

Progress (rows read / ``pg_class.reltuples`` estimate, per table) is kept in a
dict replaced as a whole, so :meth:`Snapshot.progress` may be read from
another thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import IsolationLevel

from connectors.postgres_cdc.catalog import TableInfo, quote_ident, split_name
from connectors.postgres_cdc.tables import Table

TableFactory = Callable[[str, TableInfo], Table]


class Snapshot:
    """Reads the captured tables in one snapshot; iterate :meth:`rows`."""

    def __init__(
        self,
        conn: psycopg.Connection,
        tables: Sequence[tuple[str, TableInfo]],
        make_table: TableFactory,
        *,
        snapshot_name: str | None,
        fetch_size: int,
    ) -> None:
        self._conn = conn
        self._tables = list(tables)
        self._make_table = make_table
        self._snapshot_name = snapshot_name
        self._fetch_size = fetch_size
        self.tx_id: int | None = None
        self.started_us = 0
        self._progress: dict[str, dict[str, Any]] = {
            name: {"rows": 0, "estimated": info.estimated_rows, "done": False}
            for name, info in self._tables
        }

    def begin(self) -> None:
        """Open the REPEATABLE READ transaction (importing the exported snapshot)."""
        conn = self._conn
        conn.autocommit = False
        conn.isolation_level = IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.cursor() as cursor:
            if self._snapshot_name:
                cursor.execute(f"SET TRANSACTION SNAPSHOT '{self._snapshot_name}'")
            else:
                cursor.execute("SELECT 1")
            row = cursor.execute("SELECT txid_snapshot_xmin(txid_current_snapshot())").fetchone()
        self.tx_id = int(row[0]) if row else None
        self.started_us = time.time_ns() // 1000

    def rows(self) -> Iterator[tuple[Table, tuple[str | None, ...]]]:
        """Each row of each table as text values, table by table."""
        for index, (name, info) in enumerate(self._tables):
            table = self._make_table(name, info)
            schema, relname = split_name(name)
            columns = ", ".join(f"{quote_ident(c.name)}::text" for c in info.columns)
            query = f"SELECT {columns} FROM {quote_ident(schema)}.{quote_ident(relname)}"
            done = 0
            with self._conn.cursor(name=f"sluice_snapshot_{index}") as cursor:
                cursor.itersize = self._fetch_size
                cursor.execute(query)
                while True:
                    batch = cursor.fetchmany(self._fetch_size)
                    if not batch:
                        break
                    for values in batch:
                        yield table, values
                    done += len(batch)
                    self._set_progress(name, done, False)
            self._set_progress(name, done, True)

    def _set_progress(self, name: str, rows: int, done: bool) -> None:
        progress = dict(self._progress)
        progress[name] = {**progress[name], "rows": rows, "done": done}
        self._progress = progress

    def progress(self) -> dict[str, Any]:
        """Per table ``{rows, estimated, done}`` plus totals (safe from any thread);
        ``estimated`` is None for a table PostgreSQL has no row estimate for yet."""
        tables = self._progress
        return {
            "tables": tables,
            "rows_done": sum(t["rows"] for t in tables.values()),
            "rows_estimated": sum(t["estimated"] or 0 for t in tables.values()),
        }

    def finish(self) -> None:
        """End the snapshot transaction and close its connection."""
        try:
            self._conn.rollback()
        finally:
            self._conn.close()
