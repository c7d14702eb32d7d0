"""quote.sql.identifiers: always (exact, quoted names) or never (bare: PostgreSQL folds them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from connectors.api import ConfigError, SinkRecord, struct
from connectors.api.schema import INT64, OPTIONAL_STRING, Schema
from connectors.jdbc.config import JdbcSinkConfig, JdbcSourceConfig
from connectors.jdbc.dialect import TableId, dialect_for
from connectors.jdbc.source import JdbcSourceConnector
from connectors.jdbc.url import parse_url
from harness.postgres import PostgresServer
from tests.unit.connectors.jdbc.test_jdbc_sink_task import pg_rows, start_task
from tests.unit.connectors.jdbc.test_jdbc_source_task import drain, start

NEVER = {"quote.sql.identifiers": "never"}
ID_KEY = struct(("Id", INT64))
VALUE = struct(("Id", INT64), ("Amount", INT64), ("Note", OPTIONAL_STRING))


def rec(offset: int, id_: int, amount: int | None, *, topic: str = "items",
        schema: Schema = VALUE, **extra: Any) -> SinkRecord:
    value = None if amount is None else {"Id": id_, "Amount": amount, "Note": "n", **extra}
    return SinkRecord(topic=topic, partition=0, kafka_offset=offset, key={"Id": id_},
                      key_schema=ID_KEY, value=value,
                      value_schema=None if amount is None else schema)


def columns(postgres: PostgresServer, db: str, table: str = "items") -> list[str]:
    rows = pg_rows(postgres, db, "SELECT column_name FROM information_schema.columns "
                                 f"WHERE table_name = '{table}' ORDER BY ordinal_position")
    return [r[0] for r in rows]


@pytest.mark.parametrize("model", [JdbcSinkConfig, JdbcSourceConfig])
def test_a_bad_value_names_the_key_and_the_allowed_values(model: Any) -> None:
    base = {"connection.url": "sqlite:///x.db"}
    with pytest.raises(ConfigError, match=r"quote\.sql\.identifiers: .*'always' or 'never'"):
        model.from_props({**base, "quote.sql.identifiers": "sometimes"})
    assert model.from_props(base).quote_sql_identifiers == "always"
    assert model.from_props({**base, "quote.sql.identifiers": "NEVER"}).quoting() is False


def test_never_writes_bare_names_in_every_statement() -> None:
    quoted = dialect_for(parse_url("postgresql://h/db"))
    bare = dialect_for(parse_url("postgresql://h/db"), quote_identifiers=False)
    table, cols = TableId("S", "T"), ["Id", "Amount"]
    assert quoted.upsert_sql(table, cols, ["Id"]) == (
        'INSERT INTO "S"."T" ("Id", "Amount") VALUES (%s, %s) ON CONFLICT ("Id") '
        'DO UPDATE SET "Amount" = EXCLUDED."Amount"')
    statements = [
        bare.upsert_sql(table, cols, ["Id"]), bare.update_sql(table, cols, ["Id"]),
        bare.delete_sql(table, ["Id"]), bare.add_column_sql(table, "Note", OPTIONAL_STRING),
        bare.create_table_sql(table, [("Id", INT64)], ["Id"]),
    ]
    assert not any('"' in sql for sql in statements)
    assert statements[0] == ("INSERT INTO S.T (Id, Amount) VALUES (%s, %s) ON CONFLICT (Id) "
                             "DO UPDATE SET Amount = EXCLUDED.Amount")
    assert bare.fold("Amount") == "amount" and quoted.fold("Amount") == "Amount"


def test_default_always_keeps_the_exact_case(postgres: PostgresServer, pg_database: str) -> None:
    task = start_task(postgres.url(pg_database), **{"auto.create": "true"})
    task.put([rec(0, 1, 10)])
    task.stop()
    assert columns(postgres, pg_database) == ["Id", "Amount", "Note"]


def test_never_auto_creates_lower_case_columns_and_upserts_evolves_deletes(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **NEVER, **{
        "auto.create": "true", "auto.evolve": "true", "insert.mode": "upsert",
        "pk.mode": "record_key", "delete.enabled": "true"})
    task.put([rec(0, 1, 10), rec(1, 2, 20), rec(2, 1, 11)])
    assert columns(postgres, pg_database) == ["id", "amount", "note"]
    wider = struct(("Id", INT64), ("Amount", INT64), ("Note", OPTIONAL_STRING),
                   ("Extra", OPTIONAL_STRING))
    # The known columns match the folded names: only Extra is added, then a tombstone deletes.
    task.put([rec(3, 3, 30, schema=wider, Extra="x"), rec(4, 2, None)])
    task.stop()
    assert columns(postgres, pg_database) == ["id", "amount", "note", "extra"]
    assert pg_rows(postgres, pg_database, "SELECT id, amount, extra FROM items ORDER BY id") == [
        (1, 11, None), (3, 30, "x")]


def test_never_writes_an_existing_lower_case_table(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE Items (Id bigint PRIMARY KEY, Amount bigint, Note text)")
    url = postgres.url(pg_database)
    task = start_task(url, **NEVER, **{"table.name.format": "Items"})  # COPY, no auto.create
    task.put([rec(0, 1, 10), rec(1, 2, 20)])
    task.stop()
    task = start_task(url, **NEVER, **{"table.name.format": "Items", "insert.mode": "update",
                                       "pk.mode": "record_value", "pk.fields": "Id"})
    task.put([rec(2, 2, 21)])
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT id, amount, note FROM items ORDER BY id") == [
        (1, 10, "n"), (2, 21, "n")]


def test_source_never_reads_a_lower_case_table(
    postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE Orders (Id bigint PRIMARY KEY, Amount numeric(6,0), "
                     "Code char(2), At timestamptz)")
        conn.execute("INSERT INTO orders SELECT g, g * 10, 'c', '2024-01-01Z'::timestamptz "
                     "+ g * interval '1 s' FROM generate_series(1, 3) g")
    url = postgres.url(pg_database, jdbc=True)
    props = {**NEVER, "mode": "timestamp+incrementing", "incrementing.column.name": "ID",
             "timestamp.column.name": "At"}
    assert JdbcSourceConnector().check({"connection.url": url, "connection.user": "postgres",
                                        **props}) == []
    task = start(url, tables='["orders"]', **props)
    records = drain(task)
    task.stop()
    # Bare names everywhere: the select list (char(2) read as ::text, padded), WHERE, ORDER BY.
    assert [(r.topic, r.value["id"], r.value["code"]) for r in records] == [
        ("p-orders", 1, "c "), ("p-orders", 2, "c "), ("p-orders", 3, "c ")]
    assert records[-1].source_offset is not None
    assert records[-1].source_offset["incrementing"] == 3


def test_sqlite_source_and_sink_work_with_never(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    task = start_task(f"sqlite:///{path}", **NEVER, **{"auto.create": "true"})
    task.put([rec(0, 1, 10), rec(1, 2, 20)])
    task.stop()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT id, amount FROM items ORDER BY id").fetchall() == [
            (1, 10), (2, 20)]
    source = start(f"sqlite:///{path}", tables='["items"]', mode="incrementing",
                   **{"incrementing.column.name": "Id"}, **NEVER)
    records = drain(source)
    source.stop()
    assert [r.value["Amount"] for r in records] == [10, 20]
