"""JdbcSource -> log -> JdbcSink through the runtime: tables reproduced, new rows only, resume."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State
from connectors.jdbc.source import JdbcSourceConnector
from harness.broker_process import BrokerProcess
from harness.postgres import PASSWORD_USER, PostgresServer
from harness.wait import wait_for
from tests.integration.jdbc.helpers import column_types, rows, topic_size
from tests.support.log_reading import read_all

MakeHerder = Callable[..., StandaloneHerder]
ORDERS = """
CREATE TABLE orders (
  id bigint PRIMARY KEY, name text NOT NULL, price numeric(12,2), qty integer,
  small smallint, ratio double precision, paid boolean, placed_at timestamptz, day date,
  note varchar(20)
)
"""
INSERT = (
    "INSERT INTO orders SELECT g, 'n' || g, g * 1.25, g, g %% 100, g / 3.0, g %% 2 = 0, "
    "timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute', date '2024-01-01' + g::int, "
    "'x' || g FROM generate_series(%s::bigint, %s::bigint) g"
)
SELECT = "SELECT * FROM {} ORDER BY id"


def source_config(url: str, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": url,
        "connection.user": "postgres",
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "topic.prefix": prefix,
        "poll.interval.ms": "100",
        "batch.max.rows": "50",
        **extra,
    }


def sink_config(postgres: PostgresServer, db: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "JdbcSink",
        "topics": topic,
        "connection.url": postgres.url(db),
        "insert.mode": "upsert",
        "pk.mode": "record_value",
        "pk.fields": "id",
        "auto.create": "true",
        "table.name.format": "orders",
        **extra,
    }


def test_postgres_to_postgres_reproduces_the_table_and_follows_new_rows(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, topic_name: str
) -> None:
    with postgres.database("src") as src, postgres.database("dst") as dst:
        with postgres.connect(src) as conn:
            conn.execute(ORDERS)
            conn.execute(INSERT, (1, 120))
        prefix = f"{topic_name}-"
        herder = make_herder()
        herder.put_connector_config(
            "source", source_config(postgres.url(src, jdbc=True), prefix), allow_replace=False
        )
        herder.put_connector_config(
            "sink", sink_config(postgres, dst, f"{prefix}orders"), allow_replace=False
        )
        wait_for(lambda: rows(postgres, dst, SELECT.format("orders"))
                 == rows(postgres, src, SELECT.format("orders")), "the copied table")
        with postgres.connect(src) as conn:
            conn.execute(INSERT, (121, 130))
        wait_for(lambda: len(rows(postgres, dst, SELECT.format("orders"))) == 130, "new rows")
        assert rows(postgres, dst, SELECT.format("orders")) == rows(
            postgres, src, SELECT.format("orders"))
        source_types = column_types(postgres, src, "orders")
        sink_types = column_types(postgres, dst, "orders")
        # varchar(20) travels as a Connect string: it comes back as text; all else is equal.
        assert sink_types == [
            (n, "text" if t.startswith("character varying") else t, nullable)
            for n, t, nullable in source_types
        ]
        assert topic_size(broker, f"{prefix}orders") == 130  # each row once, new rows only


def test_sqlite_to_postgres_and_restart_resumes_from_the_offset(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, pg_database: str,
    tmp_path: Path, topic_name: str,
) -> None:
    path = tmp_path / "src.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                     "price REAL, paid BOOLEAN)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)",
                         [(i, f"n{i}", i * 0.5, i % 2) for i in range(1, 21)])
    prefix = f"{topic_name}-"
    config = source_config(f"jdbc:sqlite:{path}", prefix)
    herder = make_herder()
    herder.put_connector_config("source", config, allow_replace=False)
    herder.put_connector_config("sink", sink_config(postgres, pg_database, f"{prefix}orders"),
                                allow_replace=False)
    expected = [(i, f"n{i}", i * 0.5, bool(i % 2)) for i in range(1, 21)]
    query = "SELECT id, name, price, paid FROM orders ORDER BY id"
    wait_for(lambda: rows(postgres, pg_database, query) == expected, "the SQLite rows")
    assert column_types(postgres, pg_database, "orders") == [
        ("id", "bigint", "NO"), ("name", "text", "NO"), ("price", "double precision", "YES"),
        ("paid", "boolean", "YES"),
    ]
    herder.stop()
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)",
                         [(i, f"n{i}", i * 0.5, i % 2) for i in range(21, 26)])
    again = make_herder()  # same offsets file: the source resumes after id 20
    expected += [(i, f"n{i}", i * 0.5, bool(i % 2)) for i in range(21, 26)]
    wait_for(lambda: rows(postgres, pg_database, query) == expected, "the rows added meanwhile")
    assert topic_size(broker, f"{prefix}orders") == 25  # nothing read twice across the restart
    wait_for(lambda: again.connector_offsets("source") == [
        {"partition": {"table": "orders"}, "offset": {"incrementing": 25}}
    ], "Confluent-shaped offsets")
    assert again.connector_status("source").tasks[0].state is State.RUNNING


def test_timestamp_incrementing_picks_up_changed_and_new_rows(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, pg_database: str,
    topic_name: str,
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE items (id serial PRIMARY KEY, name text, "
                     "updated timestamp NOT NULL DEFAULT now() - interval '1 hour')")
        conn.execute("INSERT INTO items (name) VALUES ('a'), ('b')")
    prefix = f"{topic_name}-"
    herder = make_herder()
    herder.put_connector_config("source", source_config(
        postgres.url(pg_database), prefix, mode="timestamp+incrementing",
        **{"timestamp.column.name": "updated"}), allow_replace=False)
    first = read_all(broker, f"{prefix}items", 2)
    assert [json.loads(r.value or b"")["payload"]["name"] for r in first] == ["a", "b"]
    with postgres.connect(pg_database) as conn, conn.transaction():
        conn.execute("UPDATE items SET name = 'a2', updated = now() - interval '30 minutes' "
                     "WHERE id = 1")
        conn.execute("INSERT INTO items (name, updated) VALUES ('c', now() - interval '20 min')")
    later = read_all(broker, f"{prefix}items", 4)
    names = [json.loads(r.value or b"")["payload"]["name"] for r in later]
    assert names == ["a", "b", "a2", "c"]  # the changed row again, then the new one
    assert topic_size(broker, f"{prefix}items") == 4
    status = herder.connector_status("source")
    assert status.tasks[0].state is State.RUNNING


def test_bad_source_configs_fail_with_the_reason_and_check_reports_them(
    make_herder: MakeHerder, postgres: PostgresServer, pg_database: str, topic_name: str,
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE present (id int)")
    base = source_config(postgres.url(pg_database, jdbc=True), f"{topic_name}-")
    wrong_password = {**base, "connection.user": PASSWORD_USER, "connection.password": "nope"}
    missing = {**base, "table.whitelist": "present,absent"}
    unreachable = {**base, "connection.url": "jdbc:postgresql://127.0.0.1:1/x"}
    check = JdbcSourceConnector().check
    assert "password authentication failed" in str(check(wrong_password))
    assert check(missing) == ["table absent (table.whitelist) does not exist"]
    assert "Connection refused" in str(check(unreachable))
    assert check({**base, "table.whitelist": "present"}) == []
    assert check({**base, "table.whitelist": "present", "incrementing.column.name": "nope"}) == [
        "table present has no column nope"]
    herder = make_herder()
    for name, config, reason in [
        ("pw", wrong_password, "password authentication failed"),
        ("missing", missing, "absent of table.whitelist not found"),
        ("down", unreachable, "Connection refused"),
    ]:
        herder.put_connector_config(name, config, allow_replace=False)
        wait_for(lambda n=name: herder.connector_status(n).state is State.FAILED,
                 f"{name} to fail")
        assert reason in (herder.connector_status(name).trace or "")


def test_tables_spread_over_tasks_and_a_new_table_is_picked_up(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, pg_database: str,
    topic_name: str,
) -> None:
    with postgres.connect(pg_database) as conn:
        for table in ("a", "b", "c"):
            conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v text)")
            conn.execute(f"INSERT INTO {table} VALUES (1, '{table}1')")
    prefix = f"{topic_name}-"
    herder = make_herder()
    herder.put_connector_config("source", source_config(
        postgres.url(pg_database), prefix, **{"tasks.max": "2", "table.poll.interval.ms": "200"}
    ), allow_replace=False)
    wait_for(lambda: all(topic_size(broker, prefix + t) == 1 for t in "abc"), "three topics")
    plans = [json.loads(c["tables"]) for c in herder.task_configs("source")]
    assert plans == [["a", "c"], ["b"]]
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE d (id int PRIMARY KEY, v text)")
        conn.execute("INSERT INTO d VALUES (1, 'd1'), (2, 'd2')")
    wait_for(lambda: topic_size(broker, prefix + "d") == 2, "the new table's rows")
    assert [json.loads(c["tables"]) for c in herder.task_configs("source")] == [
        ["a", "c"], ["b", "d"]]
    assert all(topic_size(broker, prefix + t) == 1 for t in "abc")  # nothing read twice
