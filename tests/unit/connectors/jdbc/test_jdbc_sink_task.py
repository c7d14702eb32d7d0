"""JdbcSinkTask against a real PostgreSQL (session server) and SQLite files, without a runtime."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from connectors.api import ConnectError, DataError, SinkRecord, TopicPartition, struct
from connectors.api.schema import INT64, OPTIONAL_STRING, Schema, SchemaType
from connectors.jdbc.sink import JdbcSinkConnector, JdbcSinkTask
from connectors.jdbc.types import TIMESTAMP, decimal_schema
from harness.postgres import PostgresServer
from tests.support.plugin_harness import SinkContext

KEY = struct(("id", INT64))
VALUE = struct(
    ("id", INT64),
    ("name", OPTIONAL_STRING),
    ("price", decimal_schema(10, 2, optional=True)),
    ("at", Schema(SchemaType.INT64, optional=True, name=TIMESTAMP, version=1)),
)
AT = dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC)


def rec(offset: int, id_: int, name: str | None, *, topic: str = "items", tomb: bool = False,
        value_schema: Schema | None = VALUE, value: Any = None) -> SinkRecord:
    if value is None and not tomb:
        value = {"id": id_, "name": name, "price": Decimal("1.50"), "at": AT}
    return SinkRecord(
        topic=topic, partition=0, kafka_offset=offset, key={"id": id_}, key_schema=KEY,
        value=None if tomb else value, value_schema=None if tomb else value_schema,
    )


def start_task(url: str, **props: str) -> JdbcSinkTask:
    task = JdbcSinkTask()
    task.initialize(SinkContext({TopicPartition("items", 0)}))  # type: ignore[arg-type]
    task.start({"connection.url": url, "connection.user": "postgres", "name": "sink",
                "topics": "items", **props})
    return task


def pg_rows(postgres: PostgresServer, db: str, sql: str) -> list[tuple[Any, ...]]:
    with postgres.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_upsert_and_delete_with_auto_create(postgres: PostgresServer, pg_database: str) -> None:
    task = start_task(
        postgres.url(pg_database, jdbc=True), **{
            "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true",
            "delete.enabled": "true",
        }
    )
    task.put([rec(0, 1, "a"), rec(1, 2, "b"), rec(2, 1, "a2")])
    task.put([rec(3, 2, None, tomb=True), rec(4, 3, "c")])
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id, name, price, at FROM items ORDER BY id") == [
        (1, "a2", Decimal("1.50"), AT), (3, "c", Decimal("1.50"), AT),
    ]
    types = pg_rows(
        postgres, pg_database,
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = 'items' ORDER BY ordinal_position",
    )
    assert types == [
        ("id", "bigint", "NO"), ("name", "text", "YES"), ("price", "numeric", "YES"),
        ("at", "timestamp with time zone", "YES"),
    ]


def test_update_mode_changes_existing_rows_only(postgres: PostgresServer, pg_database: str) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE items (id bigint PRIMARY KEY, name text, price numeric(10,2), "
                     "at timestamptz)")
        conn.execute("INSERT INTO items VALUES (1, 'old', 0, NULL)")
    task = start_task(postgres.url(pg_database), **{"insert.mode": "update",
                                                    "pk.mode": "record_key"})
    task.put([rec(0, 1, "new"), rec(1, 2, "absent")])
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id, name FROM items") == [(1, "new")]


def test_auto_evolve_adds_a_nullable_column(postgres: PostgresServer, pg_database: str) -> None:
    task = start_task(postgres.url(pg_database), **{"auto.create": "true", "auto.evolve": "true"})
    task.put([rec(0, 1, "a")])
    wider = struct(*[(f.name, f.schema) for f in VALUE.fields], ("qty", Schema(SchemaType.INT32,
                                                                                optional=True)))
    value = {"id": 2, "name": "b", "price": None, "at": None, "qty": 7}
    task.put([rec(1, 2, "b", value_schema=wider, value=value)])
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id, qty FROM items ORDER BY id") == [
        (1, None), (2, 7),
    ]


def test_without_auto_evolve_a_new_field_is_a_data_error(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **{"auto.create": "true"})
    task.put([rec(0, 1, "a")])
    with pytest.raises(DataError, match=r"no column.*qty.*auto.evolve=false"):
        task.put([rec(1, 2, "b", value_schema=None, value={"id": 2, "qty": 1})])
    task.stop()


def test_a_row_that_does_not_fit_rolls_back_its_batch(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE items (id bigint, name integer)")
    task = start_task(postgres.url(pg_database))
    good, bad = {"id": 1, "name": 5}, {"id": 2, "name": "not a number"}
    with pytest.raises(DataError, match="invalid input syntax for type integer"):
        task.put([rec(0, 1, "", value=good, value_schema=None),
                  rec(1, 2, "", value=bad, value_schema=None)])
    task.put([rec(0, 1, "", value=good, value_schema=None)])  # the runtime retries one by one
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id, name FROM items") == [(1, 5)]


def test_missing_table_without_auto_create_fails_clearly(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database))
    with pytest.raises(ConnectError, match=r"table items does not exist.*auto.create=false"):
        task.put([rec(0, 1, "a")])
    task.stop()
    problems = JdbcSinkConnector().check(
        {"connection.url": postgres.url(pg_database), "topics": "items"}
    )
    assert problems and "table items (for topic items) does not exist" in problems[0]


def test_exactly_once_stores_offsets_with_the_rows(
    postgres: PostgresServer, pg_database: str
) -> None:
    props = {"exactly.once": "true", "auto.create": "true"}
    task = start_task(postgres.url(pg_database), **props)
    assert task.pre_commit({TopicPartition("items", 0): 1}) == {}
    task.put([rec(0, 1, "a"), rec(1, 2, "b")])
    task.stop()
    again = start_task(postgres.url(pg_database), **props)
    context = again.context
    again.open([TopicPartition("items", 0)])
    again.stop()
    assert context.rewinds == {TopicPartition("items", 0): 2}  # type: ignore[union-attr]


def test_sqlite_upsert_and_schemaless_auto_create(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "out.db"
    task = start_task(f"jdbc:sqlite:{path}", **{
        "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id",
        "auto.create": "true", "auto.evolve": "true",
    })
    task.put([rec(0, 1, "a", value_schema=None, value={"id": 1, "name": "a", "ok": True}),
              rec(1, 1, "b", value_schema=None, value={"id": 1, "name": "b", "ok": False})])
    task.put([rec(2, 2, "", value={"id": 2, "name": "t", "price": Decimal("2.25"), "at": AT})])
    task.stop()
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT id, name, ok, price, at FROM items ORDER BY id").fetchall()
    assert rows == [(1, "b", 0, None, None), (2, "t", None, 2.25, "2024-05-01 12:30:00")]


def test_kafka_pk_mode_keys_rows_by_topic_partition_offset(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **{
        "insert.mode": "upsert", "pk.mode": "kafka", "auto.create": "true"})
    task.put([rec(0, 1, "a"), rec(1, 2, "b")])
    task.put([rec(1, 2, "b again")])  # redelivered offset 1: same row
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT __connect_topic, __connect_partition, "
                   "__connect_offset, name FROM items ORDER BY 3") == [
        ("items", 0, 0, "a"), ("items", 0, 1, "b again")]


def test_a_tombstone_before_the_table_exists_creates_nothing(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **{
        "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true",
        "delete.enabled": "true"})
    task.put([rec(0, 1, None, tomb=True)])
    assert task.details()["tombstones_skipped"] == 1
    task.put([rec(1, 1, "a"), rec(2, 2, "b"), rec(3, 1, None, tomb=True)])
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id, name FROM items") == [(2, "b")]
    assert len(pg_rows(postgres, pg_database, "SELECT * FROM information_schema.columns "
                                              "WHERE table_name = 'items'")) == 4


def test_a_lost_connection_is_retriable_and_the_batch_lands_after_reconnecting(
    postgres: PostgresServer, pg_database: str
) -> None:
    from connectors.api import RetriableError

    task = start_task(postgres.url(pg_database), **{
        "auto.create": "true", "retry.backoff.ms": "0", "max.retries": "1"})
    task.put([rec(0, 1, "a")])
    with postgres.connect(pg_database) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    with pytest.raises(RetriableError, match="connection"):
        task.put([rec(1, 2, "b")])
    task.put([rec(1, 2, "b")])  # the runtime redelivers the same batch
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id FROM items ORDER BY id") == [(1,), (2,)]
