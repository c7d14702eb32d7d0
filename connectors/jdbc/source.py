"""JdbcSource: copy tables (or a query) of PostgreSQL or SQLite into topics.

Confluent's JdbcSourceConnector keys and offsets (see
:mod:`connectors.jdbc.querier` for the queries per ``mode`` and the offset
shape). The connector lists the tables at start (``table.whitelist`` /
``table.include.list`` or ``table.blacklist``; a whitelisted table that does
not exist fails it with that reason) of the kinds in ``table.types`` (TABLE by
default, as Confluent's; add VIEW and, on PostgreSQL, MATERIALIZED VIEW or
PARTITIONED TABLE to copy those too), spreads them round-robin over at most
``tasks.max`` tasks, and looks again every ``table.poll.interval.ms``, asking
for new task configurations when the set changed. ``query`` runs in one task.

Records: topic = ``topic.prefix`` + table name (``schema.table`` outside
PostgreSQL's ``public``), key None (as Confluent's), value a struct (dict) with
a schema derived from the column types (:mod:`connectors.jdbc.types`), so a
JdbcSink with ``auto.create`` makes the same table. ``numeric.mapping``
(Confluent's none / precision_only / best_fit / best_fit_eager_double) reads
``numeric(p, s)`` columns as ints or doubles instead of Decimals.
``timestamp.initial`` (timestamp modes, epoch ms; -1 = when the task starts)
is where a table without a stored offset starts reading.
``schema.pattern`` (PostgreSQL; SQL LIKE, e.g. ``sales%``) lists only the
tables of matching schemas, and whitelist/blacklist names without a schema then
name tables in those schemas; SQLite has no schemas and ignores it.
``quote.sql.identifiers`` (always, the default, or never) says whether table and
column names are double-quoted in the SQL generated; never leaves them bare,
for PostgreSQL to fold to lower case.

Each task reads one table at a time through a server-side cursor,
``batch.max.rows`` rows per ``poll``, and queries each table again
``poll.interval.ms`` after its previous round ended. A lost connection is a
RetriableError (the runtime backs off; the task reconnects and resumes from
the last offsets it returned).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from connectors.api import (
    ConfigError,
    ConnectError,
    DataError,
    RetriableError,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from connectors.jdbc.config import TABLE_TYPES, JdbcSourceConfig
from connectors.jdbc.dialect import Dialect, TableId, close_quietly, dialect_for, wrap_error
from connectors.jdbc.querier import Querier
from connectors.jdbc.url import DialectName, parse_url

log = logging.getLogger(__name__)
IDLE_WAIT_S = 0.5  # longest wait in poll(): a stop returns from poll() well within its grace
TABLES_KEY = "tables"


def _dialect(config: JdbcSourceConfig) -> Dialect:
    url = parse_url(config.connection_url, config.connection_user, config.password())
    return dialect_for(url, quote_identifiers=config.quoting())


def _connect(dialect: Dialect, *, autocommit: bool) -> Any:
    return dialect.connect(autocommit=autocommit, create=False)  # a source never creates a file


def _normal(dialect: Dialect, name: str) -> str:
    """A whitelist entry as list_tables names it (public schema and SQLite: no schema)."""
    table = TableId.parse(name)
    if table.schema == "public" or dialect.name is DialectName.SQLITE:
        table = TableId(None, table.name)
    return str(table)


def _pattern(dialect: Dialect, config: JdbcSourceConfig) -> str:
    """``schema.pattern`` where it applies (PostgreSQL; SQLite has no schemas)."""
    return config.schema_pattern if dialect.name is DialectName.POSTGRESQL else ""


def _matching(dialect: Dialect, listed: list[TableId], entry: str, pattern: str) -> list[str]:
    """The listed tables a whitelist/blacklist entry names.

    ``schema.table`` names that table; a bare name is the ``public`` one, or with
    ``schema.pattern`` set, that table in any of the listed schemas (as Confluent's).
    """
    name = _normal(dialect, entry)
    if pattern and TableId.parse(entry).schema is None:
        return [str(t) for t in listed if t.name == name]
    return [name] if any(str(t) == name for t in listed) else []


def find_tables(
    dialect: Dialect, conn: Any, config: JdbcSourceConfig
) -> tuple[list[str], list[str]]:
    """(tables to copy, whitelisted tables that do not exist)."""
    pattern = _pattern(dialect, config)
    listed = dialect.list_tables(conn, config.table_type_set(), pattern)
    if config.included():
        found: dict[str, None] = {}
        missing = []
        for entry in config.included():
            tables = _matching(dialect, listed, entry, pattern)
            found.update(dict.fromkeys(tables))
            if not tables:
                missing.append(_normal(dialect, entry))
        return list(found), missing
    excluded = {t for n in config.excluded() for t in _matching(dialect, listed, n, pattern)}
    return [str(t) for t in listed if str(t) not in excluded], []


def missing_reasons(
    dialect: Dialect, conn: Any, config: JdbcSourceConfig, missing: list[str]
) -> dict[str, str]:
    """Why each whitelisted table was not found: absent, not of ``table.types``, or outside
    ``schema.pattern``."""
    if not missing:
        return {}
    pattern = _pattern(dialect, config)
    of_type = {str(t) for t in dialect.list_tables(conn, config.table_type_set())}
    anywhere = {str(t) for t in dialect.list_tables(conn, TABLE_TYPES)}
    reasons = {}
    for name in missing:
        if pattern and name in of_type:
            reasons[name] = f"is not in a schema matching schema.pattern={pattern}"
        elif name in anywhere:
            reasons[name] = f"is not of table.types={config.table_types}"
        else:
            reasons[name] = "does not exist"
    return reasons


class JdbcSourceConnector(SourceConnector):
    """Finds the tables, plans the tasks, and watches for tables coming and going."""

    config_model = JdbcSourceConfig
    aliases = (
        "JdbcSource", "JdbcSourceConnector", "io.confluent.connect.jdbc.JdbcSourceConnector",
    )

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}
        self._tables: list[str] = []
        self._stopping = threading.Event()
        self._monitor: threading.Thread | None = None

    def start(self, props: Mapping[str, str]) -> None:
        self._config = JdbcSourceConfig.from_props(props)
        self._props = dict(props)
        self._stopping.clear()
        if self._config.query:
            return
        self._dialect = _dialect(self._config)
        self._tables = self._scan(fail_on_missing=True)
        self._monitor = threading.Thread(
            target=self._watch, name=f"jdbc-tables-{props.get('name', '')}", daemon=True
        )
        self._monitor.start()

    def _scan(self, *, fail_on_missing: bool) -> list[str]:
        conn = _connect(self._dialect, autocommit=True)
        try:
            tables, missing = find_tables(self._dialect, conn, self._config)
            reasons = missing_reasons(self._dialect, conn, self._config, missing)
        finally:
            conn.close()
        if missing and fail_on_missing:
            absent = [t for t in missing if reasons[t] == "does not exist"]
            typed = [t for t in missing if reasons[t].startswith("is not of")]
            outside = [t for t in missing if t not in absent and t not in typed]
            problems = []
            if absent:
                problems.append(f"table(s) {', '.join(absent)} of table.whitelist not found")
            if typed:
                problems.append(
                    f"table(s) {', '.join(typed)} of table.whitelist not of "
                    f"table.types={self._config.table_types}"
                )
            if outside:
                problems.append(
                    f"table(s) {', '.join(outside)} of table.whitelist not in a schema "
                    f"matching schema.pattern={self._config.schema_pattern}"
                )
            raise ConnectError(f"{'; '.join(problems)} on {self._dialect.url.describe()}")
        return tables

    def _watch(self) -> None:
        while not self._stopping.wait(self._config.table_poll_interval_ms / 1000):
            try:
                tables = self._scan(fail_on_missing=False)
            except Exception as exc:
                log.warning("JdbcSource: listing tables failed: %s", exc)
                continue
            if tables != self._tables:
                log.info("JdbcSource: tables changed: %s -> %s", self._tables, tables)
                self._tables = tables
                if self.context is not None:
                    self.context.request_task_reconfiguration()

    @classmethod
    def task_class(cls) -> type:
        return JdbcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._config.query:
            return [dict(self._props)]
        groups = [self._tables[i::max_tasks] for i in range(max_tasks)]
        return [{**self._props, TABLES_KEY: json.dumps(g)} for g in groups if g]

    def stop(self) -> None:
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join(timeout=5)
            self._monitor = None

    def check(self, props: Mapping[str, str]) -> list[str]:
        try:
            config = JdbcSourceConfig.from_props(props)
            dialect = _dialect(config)
            conn = _connect(dialect, autocommit=True)
        except (ConfigError, ConnectError) as exc:
            return [str(exc)]
        problems: list[str] = []
        try:
            if config.query:
                try:
                    conn.execute(f"SELECT * FROM ({config.query}) AS q LIMIT 0")
                except Exception as exc:
                    problems.append(f"query: {str(exc).strip()}")
            else:
                tables, missing = find_tables(dialect, conn, config)
                reasons = missing_reasons(dialect, conn, config, missing)
                problems += [f"table {t} (table.whitelist) {reasons[t]}" for t in missing]
                problems += self._check_columns(dialect, conn, config, tables)
        finally:
            conn.close()
        return problems

    @staticmethod
    def _check_columns(
        dialect: Dialect, conn: Any, config: JdbcSourceConfig, tables: list[str]
    ) -> list[str]:
        wanted = [c for c in (config.incrementing_column_name, config.timestamp_column_name) if c]
        problems = []
        for name in tables if wanted else []:
            columns = {c.name for c in dialect.columns(conn, TableId.parse(name)) or []}
            problems += [
                f"table {name} has no column {c}" for c in wanted
                if dialect.fold(c) not in columns
            ]
        return problems

    def details(self) -> dict[str, Any]:
        return {"tables": list(self._tables)}


class JdbcSourceTask(SourceTask):
    """Reads its tables one round at a time, a batch per poll."""

    def __init__(self) -> None:
        super().__init__()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._conn: Any = None
        self._queriers: list[Querier] = []
        self._current: Querier | None = None

    def start(self, props: Mapping[str, str]) -> None:
        self._config = config = JdbcSourceConfig.from_props(props)
        self._dialect = _dialect(config)
        names = [] if config.query else json.loads(props.get(TABLES_KEY) or "[]")
        partitions = [{"query": "query"}] if config.query else [{"table": n} for n in names]
        stored: list[dict[str, Any] | None] = [None] * len(partitions)
        if self.context is not None and config.mode != "bulk":
            stored = [offset for _p, offset in self.context.offset_reader.offsets(partitions)]
        if config.query:
            self._queriers = [
                Querier(self._dialect, config, query=config.query, stored=stored[0])
            ]
        else:
            self._queriers = [
                Querier(self._dialect, config, table=TableId.parse(n), stored=offset)
                for n, offset in zip(names, stored, strict=True)
            ]
        self._conn = _connect(self._dialect, autocommit=False)
        self._round_ms: dict[str, float] = {}  # time inside the current round's queries
        self._rows_read = {
            q.name: self.metrics.counter("jdbc_rows_read", "Rows read from the table or query.",
                                         {"table": q.name})
            for q in self._queriers
        }
        self._round_time_ms = {
            q.name: self.metrics.gauge(
                "jdbc_round_time_ms",
                "Time the last full read of the table spent in the database (query and "
                "fetches, ms).", {"table": q.name})
            for q in self._queriers
        }

    def poll(self) -> list[SourceRecord]:
        with self._lock:
            if self._stopping.is_set():
                return []
            try:
                return self._poll()
            except Exception as exc:
                self._abort_round()
                if self._dialect.is_driver_error(exc):
                    raise wrap_error(self._dialect, exc, "reading") from exc
                raise

    def _poll(self) -> list[SourceRecord]:
        started = time.monotonic()
        querier = self._current
        if querier is None:
            if not self._queriers:
                self._stopping.wait(IDLE_WAIT_S)
                return []
            querier = min(self._queriers, key=lambda q: q.next_run)
            wait_s = querier.next_run - time.monotonic()
            if wait_s > 0:
                self._stopping.wait(min(wait_s, IDLE_WAIT_S))
                return []
            if self._conn is None:  # lost earlier: the database may be back
                try:
                    self._conn = _connect(self._dialect, autocommit=False)
                except ConnectError as exc:
                    raise RetriableError(str(exc)) from exc
            started = time.monotonic()
            try:
                querier.open(self._conn)
            except DataError as exc:
                log.warning("JdbcSource: %s; trying again later", exc)
                self._end_round(querier)
                return []
            self._current = querier
            self._round_ms[querier.name] = 0.0
        records = querier.fetch()
        self._rows_read[querier.name].inc(len(records))
        self._round_ms[querier.name] += (time.monotonic() - started) * 1000
        if not querier.active:
            self._round_time_ms[querier.name].set(self._round_ms[querier.name])
            self._end_round(querier)
        return records

    def _end_round(self, querier: Querier) -> None:
        querier.close()
        self._current = None
        querier.next_run = time.monotonic() + self._config.poll_interval_ms / 1000
        if self._conn is not None:
            self._conn.commit()

    def _abort_round(self) -> None:
        """After an error: drop the cursor and the connection (reconnect on the next poll)."""
        if self._current is not None:
            self._current.close()
            self._current = None
        conn, self._conn = self._conn, None
        close_quietly(conn)

    def stop(self) -> None:
        self._stopping.set()
        if self._lock.acquire(timeout=10):
            try:
                self._abort_round()
            finally:
                self._lock.release()

    def details(self) -> dict[str, Any]:
        current = self._current
        return {
            "tables": {q.name: {"rows_read": q.rows_read} for q in list(self._queriers)},
            "reading": current.name if current is not None else None,
        }
