"""JdbcSourceTask against the session PostgreSQL and SQLite files, without a runtime."""

from __future__ import annotations

import datetime as dt
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from connectors.api import ConfigError, SchemaType, SourceRecord
from connectors.jdbc.config import JdbcSourceConfig
from connectors.jdbc.source import JdbcSourceTask
from connectors.jdbc.types import DATE, DECIMAL, TIMESTAMP
from harness.postgres import PostgresServer
from tests.support.plugin_harness import DictOffsetReader, SourceContext


def start(url: str, reader: DictOffsetReader | None = None, **props: str) -> JdbcSourceTask:
    task = JdbcSourceTask()
    task.initialize(SourceContext(reader or DictOffsetReader()))  # type: ignore[arg-type]
    task.start({"connection.url": url, "connection.user": "postgres", "poll.interval.ms": "1",
                "topic.prefix": "p-", **props})
    return task


def drain(task: JdbcSourceTask, rounds: int = 6) -> list[SourceRecord]:
    records: list[SourceRecord] = []
    for _ in range(rounds):
        records += task.poll()
    return records


def test_query_mode_with_incrementing_and_the_schema_from_the_result(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE t (id bigint, price numeric(8,3), at timestamptz, d date, "
                     "u uuid, skip boolean)")
        conn.execute("INSERT INTO t SELECT g, g + 0.5, '2024-01-01Z', '2024-01-02', "
                     "gen_random_uuid(), g = 2 FROM generate_series(1, 3) g")
    reader = DictOffsetReader()
    task = start(postgres.url(pg_database, jdbc=True), reader, mode="incrementing", **{
        "incrementing.column.name": "id", "batch.max.rows": "2",
        "query": "SELECT id, price, at, d, u FROM t WHERE NOT skip",
    })
    records = drain(task)
    task.stop()
    assert [r.value["id"] for r in records] == [1, 3]
    assert {r.topic for r in records} == {"p-"}
    first = records[0]
    assert first.value["price"] == Decimal("1.500") and isinstance(first.value["u"], str)
    assert first.value["at"] == dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    assert first.value_schema is not None
    kinds = {f.name: (f.schema.type, f.schema.name) for f in first.value_schema.fields}
    assert kinds == {
        "id": (SchemaType.INT64, None), "price": (SchemaType.BYTES, DECIMAL),
        "at": (SchemaType.INT64, TIMESTAMP), "d": (SchemaType.INT32, DATE),
        "u": (SchemaType.STRING, None),
    }
    assert [r.source_offset for r in records] == [None, {"incrementing": 3}]  # one per batch
    assert records[-1].source_partition == {"query": "query"}


def test_bulk_mode_reads_the_whole_table_every_round(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER, at TIMESTAMP, price DECIMAL(6,2))")
        conn.execute("INSERT INTO t VALUES (1, '2024-03-01 10:00:00', 2.5), (2, NULL, NULL)")
    task = start(f"sqlite:///{path}", tables='["t"]')  # as the connector plans it
    records = drain(task, 8)
    task.stop()
    assert len(records) >= 4 and len(records) % 2 == 0  # each round: both rows again
    assert records[0].value == {
        "id": 1, "at": dt.datetime(2024, 3, 1, 10, tzinfo=dt.UTC), "price": Decimal("2.5"),
    }
    assert all(r.source_offset is None for r in records)


def test_incrementing_resumes_after_the_stored_offset(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE t (id serial PRIMARY KEY, v text)")
        conn.execute("INSERT INTO t (v) SELECT 'v' || g FROM generate_series(1, 5) g")
    reader = DictOffsetReader({DictOffsetReader.key({"table": "t"}): {"incrementing": 3}})
    task = start(postgres.url(pg_database), reader, mode="incrementing", tables='["t"]', **{
        "incrementing.column.name": "id"})
    records = drain(task)
    task.stop()
    assert [r.value["v"] for r in records] == ["v4", "v5"]
    assert records[-1].source_offset == {"incrementing": 5}


def test_postgres_rows_stream_through_a_server_side_cursor(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
        conn.execute("INSERT INTO t SELECT generate_series(1, 10)")
    task = start(postgres.url(pg_database), mode="incrementing", tables='["t"]', **{
        "incrementing.column.name": "id", "batch.max.rows": "4"})
    first = task.poll()
    # The round is open: its rows wait in a DECLAREd cursor on the server, not in memory.
    cursors = task._conn.execute("SELECT count(*) FROM pg_cursors").fetchone()
    rest = drain(task)
    task.stop()
    assert [r.value["id"] for r in first] == [1, 2, 3, 4]
    assert cursors == (1,)
    assert [r.value["id"] for r in rest] == list(range(5, 11))


def test_timestamp_mode_waits_for_the_delay_interval(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE t (v text, changed timestamptz)")
        conn.execute("INSERT INTO t VALUES ('old', now() - interval '2 hours'), "
                     "('older', now() - interval '3 hours'), ('fresh', now()), ('none', NULL)")
    task = start(postgres.url(pg_database), mode="timestamp", tables='["t"]', **{
        "timestamp.column.name": "changed", "timestamp.delay.interval.ms": "3600000"})
    records = drain(task)
    task.stop()
    assert [r.value["v"] for r in records] == ["older", "old"]  # by timestamp; not yet 'fresh'
    offset = records[-1].source_offset
    assert offset is not None and set(offset) == {"timestamp", "timestamp_nanos"}


NUMERIC_COLUMNS = "a numeric(2,0), b numeric(5,0), c numeric(18,0), d numeric(12,2), " \
    "e numeric(20,0), f numeric(20,4)"
NUMERIC_ROW = "(12, 12345, 123456789012345678, 1234567890.25, 12345678901234567890, 1.2345)"
# numeric.mapping -> the Connect type of columns a..f (Confluent's rules).
NUMERIC_TYPES = {
    "none": [SchemaType.BYTES] * 6,
    "precision_only": [SchemaType.INT8, SchemaType.INT32, SchemaType.INT64, SchemaType.BYTES,
                       SchemaType.BYTES, SchemaType.BYTES],
    "best_fit": [SchemaType.INT8, SchemaType.INT32, SchemaType.INT64, SchemaType.FLOAT64,
                 SchemaType.BYTES, SchemaType.BYTES],
    "best_fit_eager_double": [SchemaType.INT8, SchemaType.INT32, SchemaType.INT64,
                              SchemaType.FLOAT64, SchemaType.BYTES, SchemaType.FLOAT64],
}
NUMERIC_VALUES = {
    SchemaType.INT8: [12], SchemaType.INT32: [12345], SchemaType.INT64: [123456789012345678],
    SchemaType.FLOAT64: [1234567890.25, 1.2345],
}


def _check_numeric_mapping(records: list[SourceRecord], mapping: str) -> None:
    assert len(records) == 1 and records[0].value_schema is not None
    schema = {f.name: f.schema for f in records[0].value_schema.fields}
    value = records[0].value
    assert [schema[c].type for c in "abcdef"] == NUMERIC_TYPES[mapping]
    for column, kind in zip("abcdef", NUMERIC_TYPES[mapping], strict=True):
        if kind is SchemaType.BYTES:
            assert schema[column].name == DECIMAL and isinstance(value[column], Decimal)
        else:
            assert type(value[column]) is (float if kind is SchemaType.FLOAT64 else int)
            assert value[column] in NUMERIC_VALUES[kind]


@pytest.mark.parametrize("mapping", list(NUMERIC_TYPES))
def test_numeric_mapping_on_postgres(
    postgres: PostgresServer, pg_database: str, mapping: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute(f"CREATE TABLE n (id bigint, {NUMERIC_COLUMNS})")
        conn.execute(f"INSERT INTO n VALUES (1, {NUMERIC_ROW[1:]}")
    task = start(postgres.url(pg_database, jdbc=True), mode="bulk", tables='["n"]',
                 **{"numeric.mapping": mapping})
    records = [r for r in drain(task, 2) if r.topic == "p-n"][:1]
    task.stop()
    _check_numeric_mapping(records, mapping)


@pytest.mark.parametrize("mapping", ["precision_only", "best_fit_eager_double"])
def test_numeric_mapping_on_sqlite(tmp_path: Path, mapping: str) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE n (id INTEGER, {NUMERIC_COLUMNS})")
        conn.execute(f"INSERT INTO n VALUES (1, {NUMERIC_ROW[1:]}")
    task = start(f"sqlite:///{path}", mode="bulk", tables='["n"]',
                 **{"numeric.mapping": mapping})
    records = drain(task, 1)[:1]
    task.stop()
    _check_numeric_mapping(records, mapping)


def test_a_bad_numeric_mapping_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"numeric\.mapping"):
        JdbcSourceConfig.from_props({"connection.url": "sqlite:///x", "numeric.mapping": "all"})
