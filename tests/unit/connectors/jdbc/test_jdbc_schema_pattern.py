"""schema.pattern: JdbcSource lists only the tables of matching schemas (SQLite has none)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from connectors.api import ConnectError
from connectors.jdbc.config import JdbcSourceConfig
from connectors.jdbc.source import JdbcSourceConnector
from harness.postgres import PostgresServer
from tests.unit.connectors.jdbc.test_jdbc_table_types import copy_all, planned_tables


def _pg(postgres: PostgresServer, db: str) -> str:
    with postgres.connect(db) as conn:
        conn.execute("CREATE SCHEMA other")
        conn.execute("CREATE SCHEMA elsewhere")
        for table in ("a", "shared", "other.b", "other.shared", "elsewhere.c"):
            conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v text)")
            conn.execute(f"INSERT INTO {table} VALUES (1, '{table}')")
    return postgres.url(db, jdbc=True)


def test_only_tables_of_matching_schemas_are_listed_and_copied(
    postgres: PostgresServer, pg_database: str
) -> None:
    url = _pg(postgres, pg_database)
    everything = ["a", "elsewhere.c", "other.b", "other.shared", "shared"]
    assert planned_tables(url) == everything
    assert planned_tables(url, **{"schema.pattern": ""}) == everything
    for pattern in ("other", "oth%", "o_her"):  # SQL LIKE wildcards
        assert planned_tables(url, **{"schema.pattern": pattern}) == ["other.b", "other.shared"]
    assert planned_tables(url, **{"schema.pattern": "%e%"}) == [
        "elsewhere.c", "other.b", "other.shared"]
    assert planned_tables(url, **{"schema.pattern": "public"}) == ["a", "shared"]
    assert planned_tables(url, **{"schema.pattern": "nothing%"}) == []
    records = copy_all(url, planned_tables(url, **{"schema.pattern": "oth%"}))
    # Topic names as without the pattern: schema.table outside public (bulk: read repeatedly).
    assert sorted({(r.topic, r.value["v"]) for r in records}) == [
        ("p-other.b", "other.b"), ("p-other.shared", "other.shared")]


def test_whitelist_and_blacklist_names_match_within_the_listed_schemas(
    postgres: PostgresServer, pg_database: str
) -> None:
    url = _pg(postgres, pg_database)
    other = {"schema.pattern": "other"}
    assert planned_tables(url, **other, **{"table.whitelist": "shared"}) == ["other.shared"]
    assert planned_tables(url, **other, **{"table.whitelist": "other.b"}) == ["other.b"]
    assert planned_tables(url, **other, **{"table.blacklist": "shared"}) == ["other.b"]
    # Without the pattern a bare name is the public table (as before).
    assert planned_tables(url, **{"table.whitelist": "shared"}) == ["shared"]
    # A whitelisted table outside the pattern fails the connector with that reason.
    with pytest.raises(ConnectError, match=r"a of table\.whitelist not in a schema matching "
                                           r"schema\.pattern=other"):
        planned_tables(url, **other, **{"table.whitelist": "b,a"})
    problems = JdbcSourceConnector().check({
        "connection.url": url, "connection.user": "postgres", "schema.pattern": "other",
        "table.whitelist": "b, a, nope"})
    assert problems == [
        "table a (table.whitelist) is not in a schema matching schema.pattern=other",
        "table nope (table.whitelist) does not exist",
    ]


def test_sqlite_has_no_schemas_and_ignores_the_pattern(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        conn.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT)")
    url = f"sqlite:///{path}"
    assert planned_tables(url, **{"schema.pattern": "other"}) == ["t", "u"]
    assert planned_tables(url, **{"schema.pattern": "other", "table.whitelist": "u"}) == ["u"]
    description = JdbcSourceConfig.model_fields["schema_pattern"].description or ""
    assert "SQLite" in description and "ignores" in description
