"""table.types: which kinds of relations JdbcSource lists (Confluent's default: TABLE only)."""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from connectors.api import ConfigError, ConnectError, SourceRecord
from connectors.jdbc.config import JdbcSourceConfig
from connectors.jdbc.source import JdbcSourceConnector
from connectors.jdbc.types import DECIMAL
from harness.postgres import PostgresServer
from tests.unit.connectors.jdbc.test_jdbc_source_task import drain, start


def planned_tables(url: str, **props: str) -> list[str]:
    """The tables the connector plans for one task (its listing at start)."""
    connector = JdbcSourceConnector()
    connector.start({"connection.url": url, "connection.user": "postgres",
                     "topic.prefix": "p-", "table.poll.interval.ms": "60000", **props})
    try:
        configs = connector.task_configs(1)
    finally:
        connector.stop()
    return sorted(json.loads(configs[0]["tables"])) if configs else []


def copy_all(url: str, tables: list[str], **props: str) -> list[SourceRecord]:
    task = start(url, tables=json.dumps(tables), **props)
    try:
        return drain(task, 2 * len(tables))
    finally:
        task.stop()


def _pg(postgres: PostgresServer, db: str) -> str:
    with postgres.connect(db) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, v text)")
        conn.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        conn.execute("CREATE VIEW v AS SELECT id, upper(v) AS v FROM t")
        conn.execute("CREATE MATERIALIZED VIEW m AS SELECT id, v, (id * 1.5)::numeric(4,1) AS n "
                     "FROM t")
    return postgres.url(db, jdbc=True)


def test_postgres_lists_tables_only_by_default_and_views_when_asked(
    postgres: PostgresServer, pg_database: str
) -> None:
    url = _pg(postgres, pg_database)
    assert planned_tables(url) == ["t"]
    assert planned_tables(url, **{"table.types": "TABLE,VIEW"}) == ["t", "v"]
    assert planned_tables(url, **{"table.types": "view, materialized view"}) == ["m", "v"]
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE parted (id int) PARTITION BY RANGE (id)")
        conn.execute("CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10)")
    # As pgjdbc: TABLE lists the partitions, PARTITIONED TABLE the parent (not both: no copy twice).
    assert planned_tables(url) == ["parted_1", "t"]
    assert planned_tables(url, **{"table.types": "PARTITIONED TABLE"}) == ["parted"]
    records = copy_all(url, ["t", "v", "m"])
    by_topic: dict[str, list[SourceRecord]] = {}
    for r in records:
        by_topic.setdefault(r.topic, []).append(r)
    assert [r.value for r in by_topic["p-v"][:2]] == [{"id": 1, "v": "A"}, {"id": 2, "v": "B"}]
    first = by_topic["p-m"][0]
    assert first.value == {"id": 1, "v": "a", "n": Decimal("1.5")}
    # A materialized view's columns come from the catalog: numeric(4,1) keeps its precision.
    assert first.value_schema is not None
    n = first.value_schema.field("n")
    assert n is not None and n.schema.name == DECIMAL
    assert (n.schema.parameters or {}).get("scale") == "1"


def test_sqlite_lists_tables_only_by_default_and_views_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        conn.execute("CREATE VIEW v AS SELECT id, upper(v) AS v FROM t")
    url = f"sqlite:///{path}"
    assert planned_tables(url) == ["t"]
    assert planned_tables(url, **{"table.types": "TABLE,VIEW"}) == ["t", "v"]
    for postgres_only in ("MATERIALIZED VIEW", "PARTITIONED TABLE"):  # none in SQLite
        assert planned_tables(url, **{"table.types": postgres_only}) == []
    records = [r for r in copy_all(url, ["v"]) if r.topic == "p-v"]
    assert [r.value for r in records[:2]] == [{"id": 1, "v": "A"}, {"id": 2, "v": "B"}]


def test_a_whitelisted_view_needs_its_table_type(
    postgres: PostgresServer, pg_database: str
) -> None:
    url = _pg(postgres, pg_database)
    with pytest.raises(ConnectError, match=r"v of table\.whitelist not of table\.types=TABLE"):
        planned_tables(url, **{"table.whitelist": "v"})
    with pytest.raises(ConnectError, match=r"\(s\) x of table\.whitelist not found; .* v of"):
        planned_tables(url, **{"table.whitelist": "t,x,v"})
    problems = JdbcSourceConnector().check(
        {"connection.url": url, "connection.user": "postgres", "table.whitelist": "t,v"}
    )
    assert problems == ["table v (table.whitelist) is not of table.types=TABLE"]
    assert planned_tables(url, **{"table.whitelist": "v", "table.types": "VIEW"}) == ["v"]


@pytest.mark.parametrize("value", ["TABLE,SYNONYM", "SYSTEM TABLE", " , "])
def test_an_unknown_table_type_names_the_key_and_the_allowed_values(value: str) -> None:
    allowed = "TABLE, VIEW, MATERIALIZED VIEW, PARTITIONED TABLE"
    with pytest.raises(ConfigError, match=rf"table\.types: .*{allowed}"):
        JdbcSourceConfig.from_props({"connection.url": "sqlite:///x", "table.types": value})
