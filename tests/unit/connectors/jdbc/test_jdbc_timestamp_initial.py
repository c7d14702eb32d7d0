"""timestamp.initial: where a timestamp-mode table without a stored offset starts reading."""

from __future__ import annotations

import datetime as dt

import pytest

from connectors.api import ConfigError
from connectors.jdbc.config import JdbcSourceConfig
from harness.postgres import PostgresServer
from tests.support.plugin_harness import DictOffsetReader
from tests.unit.connectors.jdbc.test_jdbc_source_task import drain, start

OLD = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
NEW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)
BETWEEN_MS = int(dt.datetime(2024, 3, 1, tzinfo=dt.UTC).timestamp() * 1000)


def _table(postgres: PostgresServer, db: str) -> None:
    with postgres.connect(db) as conn:
        conn.execute("CREATE TABLE t (id serial PRIMARY KEY, v text, changed timestamp)")
        conn.execute("INSERT INTO t (v, changed) VALUES ('old1', %s), ('new1', %s), "
                     "('old2', %s), ('new2', %s)", (OLD, NEW, OLD, NEW))


@pytest.mark.parametrize("mode", ["timestamp", "timestamp+incrementing"])
def test_rows_before_the_initial_timestamp_are_skipped(
    postgres: PostgresServer, pg_database: str, mode: str
) -> None:
    _table(postgres, pg_database)
    task = start(postgres.url(pg_database), mode=mode, tables='["t"]', **{
        "timestamp.column.name": "changed", "incrementing.column.name": "id",
        "timestamp.initial": str(BETWEEN_MS)})
    records = drain(task, 3)
    task.stop()
    assert [r.value["v"] for r in records] == ["new1", "new2"]


def test_a_stored_offset_wins_over_the_initial_timestamp(
    postgres: PostgresServer, pg_database: str
) -> None:
    _table(postgres, pg_database)
    stored = {"timestamp": int(OLD.timestamp() * 1000) - 1, "timestamp_nanos": 0}
    reader = DictOffsetReader({DictOffsetReader.key({"table": "t"}): stored})
    task = start(postgres.url(pg_database), reader, mode="timestamp", tables='["t"]', **{
        "timestamp.column.name": "changed", "timestamp.initial": str(BETWEEN_MS)})
    records = drain(task, 3)
    task.stop()
    assert sorted(r.value["v"] for r in records) == ["new1", "new2", "old1", "old2"]


def test_minus_one_starts_at_the_time_the_task_starts(
    postgres: PostgresServer, pg_database: str
) -> None:
    _table(postgres, pg_database)
    with postgres.connect(pg_database) as conn:  # even a row from a moment ago is "existing"
        conn.execute("INSERT INTO t (v, changed) VALUES ('recent', now() AT TIME ZONE 'UTC')")
    task = start(postgres.url(pg_database), mode="timestamp+incrementing", tables='["t"]', **{
        "timestamp.column.name": "changed", "incrementing.column.name": "id",
        "timestamp.initial": "-1"})  # timestamp.delay.interval.ms is 0: rows up to now
    before = drain(task, 3)
    with postgres.connect(pg_database) as conn:
        conn.execute("INSERT INTO t (v, changed) VALUES ('later', now() AT TIME ZONE 'UTC')")
    after = drain(task, 3)
    task.stop()
    assert before == []
    assert [r.value["v"] for r in after] == ["later"]
    assert after[-1].source_offset is not None and after[-1].source_offset["incrementing"] == 6


def test_timestamp_initial_below_minus_one_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"timestamp\.initial"):
        JdbcSourceConfig.from_props({"connection.url": "sqlite:///x", "timestamp.initial": "-2"})
