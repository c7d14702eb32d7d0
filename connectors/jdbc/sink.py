"""JdbcSink: write records into PostgreSQL or SQLite tables (Confluent's keys).

Each ``put`` is one database transaction: the rows of the batch (COPY for
inserts on PostgreSQL, ``executemany`` for upserts, updates and deletes) and,
with ``exactly.once=true``, the partitions' next offsets in
``offsets.table.name``. So ``put`` returning means the rows are committed, and
``pre_commit`` has nothing left to flush.

Failures: a row the database refuses (a string into an integer column, a
NOT NULL or unique violation) rolls the transaction back and raises
DataError; the runtime then puts the batch one record at a time, so good
records land and the bad one goes to the dead-letter queue under
``errors.tolerance=all``. With ``exactly.once=true``, offsets past records that
never reached ``put`` (dead-lettered, or dropped by a transform) are stored by
``pre_commit``, so a restart does not send them to the dead-letter queue again.
A lost connection raises RetriableError (after
``retry.backoff.ms``) and reconnects, up to ``max.retries`` in a row; a missing
table without ``auto.create``, a wrong password or an unreachable host fail
the task with the reason in its trace.

Values must be structs (dicts): JsonConverter with ``schemas.enable=true``
gives their schema, which ``auto.create``/``auto.evolve`` use; schemaless dicts
work too, with column types inferred from the values (int -> bigint, float ->
double, str -> text, bool, bytes, datetime -> timestamptz; all nullable).
Tombstones delete rows with ``delete.enabled=true`` and are skipped otherwise.
``fields.whitelist`` (or its newer name ``fields.include.list``; not both) lists
the value fields written, created and added (key fields are written anyway); a
record lacking a listed field is a DataError.
``quote.sql.identifiers=never`` (default always) writes table and column names
bare in every statement (CREATE/ALTER TABLE, COPY, INSERT, UPSERT, UPDATE,
DELETE), so PostgreSQL folds them to lower case: a field ``Amount`` creates and
writes column ``amount``, and tables created without quotes are written as is.
Delivery is at-least-once by default (a crash between the database commit and
the consumer commit re-delivers, which upsert absorbs) and exactly-once with
``exactly.once=true``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from connectors.api import (
    ConfigError,
    ConnectError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from connectors.jdbc.config import JdbcSinkConfig
from connectors.jdbc.dialect import Dialect, TableId, close_quietly, dialect_for, wrap_error
from connectors.jdbc.offsets_table import OffsetsTable
from connectors.jdbc.url import parse_url
from connectors.jdbc.writer import SinkWriter

log = logging.getLogger(__name__)


def _dialect(config: JdbcSinkConfig) -> Dialect:
    url = parse_url(config.connection_url, config.connection_user, config.password())
    return dialect_for(url, quote_identifiers=config.quoting())


class JdbcSinkConnector(SinkConnector):
    """Writes the records of its topics into database tables (one table per topic)."""

    config_model = JdbcSinkConfig
    aliases = ("JdbcSink", "JdbcSinkConnector", "io.confluent.connect.jdbc.JdbcSinkConnector")

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        config = JdbcSinkConfig.from_props(props)
        parse_url(config.connection_url)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        try:
            config = JdbcSinkConfig.from_props(props)
            dialect = _dialect(config)
            conn = dialect.connect(autocommit=True)
        except (ConfigError, ConnectError) as exc:
            return [str(exc)]
        problems = []
        try:
            if not config.auto_create:
                topics = [t.strip() for t in props.get("topics", "").split(",") if t.strip()]
                for topic in topics:
                    name = config.table_name_format.replace("${topic}", topic)
                    table = TableId.parse(name)
                    if dialect.columns(conn, table) is None:
                        problems.append(
                            f"table {table} (for topic {topic}) does not exist on "
                            f"{dialect.url.describe()} and auto.create=false"
                        )
        finally:
            conn.close()
        return problems


class JdbcSinkTask(SinkTask):
    """One transaction per put; optional offsets in the same transaction."""

    def __init__(self) -> None:
        super().__init__()
        self._conn: Any = None
        self._writer: SinkWriter | None = None
        self._offsets: OffsetsTable | None = None
        self._stored: dict[TopicPartition, int] = {}  # next offsets in the offsets table
        self._stopping = threading.Event()
        self._failures = 0
        self._rows = 0
        self._deletes = 0
        self._skipped = 0
        self._transactions = 0

    def start(self, props: Mapping[str, str]) -> None:
        self._config = JdbcSinkConfig.from_props(props)
        self._dialect = _dialect(self._config)
        self._rows_metric = self.metrics.counter(
            "jdbc_rows_written", "Rows inserted, updated or upserted (committed)."
        )
        self._deletes_metric = self.metrics.counter(
            "jdbc_rows_deleted", "Rows deleted by tombstones (committed)."
        )
        if self._config.exactly_once:
            self._offsets = OffsetsTable(
                self._dialect, self._config.offsets_table_name, props.get("name", "jdbc-sink")
            )
        self._connect()

    def _connect(self) -> None:
        self._conn = self._dialect.connect(autocommit=False)
        self._writer = SinkWriter(self._dialect, self._conn, self._config)
        if self._offsets is not None:
            try:
                self._offsets.create(self._conn)
            except Exception as exc:
                self._rollback()
                if self._dialect.is_driver_error(exc):
                    raise wrap_error(self._dialect, exc, "creating the offsets table") from exc
                raise

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        if self._offsets is None or not partitions:
            return
        self._ensure_connected()
        stored = self._offsets.read(self._conn, partitions)
        self._stored.update(stored)
        if stored and self.context is not None:
            log.info("JdbcSink resumes from its offsets table: %s", stored)
            self.context.offset(stored)

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        self._ensure_connected()
        writer, conn = self._writer, self._conn
        assert writer is not None
        next_offsets = _next_offsets(records) if self._offsets is not None else {}
        try:
            self._dialect.begin(conn)
            counts = writer.write(records)
            if self._offsets is not None:
                self._offsets.write(conn, next_offsets)
            conn.commit()
        except Exception as exc:
            self._rollback()
            if not self._dialect.is_driver_error(exc):
                raise
            error = wrap_error(self._dialect, exc, f"writing {len(records)} record(s)")
            if isinstance(error, RetriableError):
                self._retry_later(error)
            raise error from exc
        writer.committed()
        self._stored.update(next_offsets)
        self._failures = 0
        self._transactions += 1
        self._rows += counts.rows
        self._deletes += counts.deletes
        self._rows_metric.inc(counts.rows)
        self._deletes_metric.inc(counts.deletes)
        self._skipped += counts.skipped

    def _retry_later(self, error: RetriableError) -> None:
        """Count the failure, drop a broken connection, wait retry.backoff.ms; fail past max."""
        self._failures += 1
        if self._failures > self._config.max_retries:
            raise ConnectError(f"{error} (gave up after max.retries={self._config.max_retries})")
        self._close()
        self._stopping.wait(self._config.retry_backoff_ms / 1000)

    def _ensure_connected(self) -> None:
        """Reconnect after a lost connection: retriable up to max.retries times in a row."""
        if self._conn is None or getattr(self._conn, "closed", False):
            try:
                self._connect()
            except ConnectError as exc:
                self._failures += 1
                if self._failures > self._config.max_retries:
                    raise
                raise RetriableError(str(exc)) from exc

    def _rollback(self) -> None:
        if self._writer is not None:
            self._writer.rollback()
        try:
            if self._conn is not None:
                self._conn.rollback()
        except Exception:
            self._close()

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Rows are committed by put(); with exactly.once the offsets live in the database.

        ``offsets`` can be past the last record put: records the runtime sent to the
        dead-letter queue or a transform dropped never reach ``put``. Those offsets are
        stored here, in a transaction of their own, so a restart does not handle them
        again (the dead-letter topic would get them twice).
        """
        if self._offsets is None:
            return dict(offsets)
        ahead = {tp: o for tp, o in offsets.items() if o > self._stored.get(tp, -1)}
        if ahead:
            self._store_offsets(ahead)
        return {}

    def _store_offsets(self, next_offsets: dict[TopicPartition, int]) -> None:
        """Write ``next_offsets`` alone; a driver error is retriable (the next commit retries)."""
        assert self._offsets is not None
        self._ensure_connected()
        try:
            self._dialect.begin(self._conn)
            self._offsets.write(self._conn, next_offsets)
            self._conn.commit()
        except Exception as exc:
            self._rollback()
            if not self._dialect.is_driver_error(exc):
                raise
            raise RetriableError(
                str(wrap_error(self._dialect, exc, "storing offsets past skipped records"))
            ) from exc
        self._stored.update(next_offsets)

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        close_quietly(conn)

    def stop(self) -> None:
        self._stopping.set()
        self._close()

    def details(self) -> dict[str, Any]:
        return {
            "rows_written": self._rows,
            "rows_deleted": self._deletes,
            "tombstones_skipped": self._skipped,
            "transactions": self._transactions,
            "exactly_once": self._offsets is not None,
        }


def _next_offsets(records: Sequence[SinkRecord]) -> dict[TopicPartition, int]:
    out: dict[TopicPartition, int] = {}
    for record in records:
        tp = TopicPartition(record.topic, record.partition or 0)
        nxt = record.kafka_offset + 1
        if nxt > out.get(tp, -1):
            out[tp] = nxt
    return out
