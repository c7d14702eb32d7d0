"""URL parsing, type mapping, task planning and offsets of the JDBC connectors (no server)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from connectors.api import ConfigError, Schema, SchemaType
from connectors.jdbc.config import JdbcSinkConfig, JdbcSourceConfig
from connectors.jdbc.dialect import TableId
from connectors.jdbc.querier import from_offset_ts, to_offset_ts
from connectors.jdbc.source import JdbcSourceConnector
from connectors.jdbc.types import (
    DECIMAL,
    TIMESTAMP,
    pg_column_schema,
    pg_sql_type,
    sqlite_column_schema,
)
from connectors.jdbc.url import DialectName, parse_url


@pytest.mark.parametrize(
    ("url", "dialect", "target"),
    [
        ("jdbc:postgresql://db.example:6543/sales?sslmode=require&loggerLevel=OFF",
         DialectName.POSTGRESQL, "postgresql://db.example:6543/sales?sslmode=require&"
         "connect_timeout=10"),
        ("postgresql://u@localhost/app", DialectName.POSTGRESQL,
         "postgresql://localhost:5432/app?connect_timeout=10"),
        ("jdbc:sqlite:/data/app.db", DialectName.SQLITE, "/data/app.db"),
        ("sqlite:///data/app.db", DialectName.SQLITE, "/data/app.db"),
        ("jdbc:sqlite:relative.db", DialectName.SQLITE, "relative.db"),
    ],
)
def test_connection_urls(url: str, dialect: DialectName, target: str) -> None:
    parsed = parse_url(url)
    assert (parsed.dialect, parsed.target) == (dialect, target)


def test_user_and_password_come_from_keys_then_the_url() -> None:
    from_url = parse_url("jdbc:postgresql://h/db?user=a&password=s3cr3t")
    assert (from_url.user, from_url.password) == ("a", "s3cr3t")
    assert "s3cr3t" not in from_url.target + from_url.describe()
    overridden = parse_url("postgresql://a:b@h/db", "c", "d")
    assert (overridden.user, overridden.password) == ("c", "d")


def test_unknown_url_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"connection.url: unsupported URL"):
        parse_url("jdbc:mysql://h/db")


def test_postgres_types_map_to_connect_schemas_and_back() -> None:
    money = pg_column_schema("numeric", 12, 2, True)
    assert (money.type, money.name, money.optional) == (SchemaType.BYTES, DECIMAL, True)
    assert money.parameters == {"scale": "2", "connect.decimal.precision": "12"}
    assert pg_sql_type(money) == "numeric(12,2)"
    stamp = pg_column_schema("timestamp with time zone", None, None, False)
    assert (stamp.name, pg_sql_type(stamp)) == (TIMESTAMP, "timestamptz")
    assert pg_column_schema("numeric", None, None, False).type is SchemaType.FLOAT64
    assert pg_column_schema("uuid", None, None, False).type is SchemaType.STRING
    for name, sql in [("smallint", "smallint"), ("integer", "integer"), ("bigint", "bigint"),
                      ("boolean", "boolean"), ("bytea", "bytea"), ("date", "date"),
                      ("double precision", "double precision"), ("real", "real")]:
        assert pg_sql_type(pg_column_schema(name, None, None, False)) == sql


def test_sqlite_declared_types() -> None:
    assert sqlite_column_schema("INTEGER", False) == Schema(SchemaType.INT64)
    assert sqlite_column_schema("DECIMAL(10, 3)", True).parameters == {
        "scale": "3", "connect.decimal.precision": "10"}
    assert sqlite_column_schema("DATETIME", True).name == TIMESTAMP
    assert sqlite_column_schema("VARCHAR(20)", True).type is SchemaType.STRING


def test_table_names_from_topics() -> None:
    assert TableId.parse("orders") == TableId(None, "orders")
    assert TableId.parse("inventory.orders") == TableId("inventory", "orders")
    assert TableId.parse("cdc.public.orders") == TableId("public", "orders")


def test_offset_timestamps_round_trip_to_the_microsecond() -> None:
    when = dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=dt.UTC)
    ms, nanos = to_offset_ts(when)
    assert (ms, nanos) == (1709251199123, 123456000)
    assert from_offset_ts(ms, nanos) == when
    assert to_offset_ts(when.replace(tzinfo=None)) == (ms, nanos)  # naive = UTC


def test_config_rules_are_checked_with_the_keys_named() -> None:
    url = {"connection.url": "jdbc:sqlite:x.db"}
    with pytest.raises(ConfigError, match=r"incrementing.column.name"):
        JdbcSourceConfig.from_props({**url, "mode": "incrementing"})
    with pytest.raises(ConfigError, match=r"query and table.whitelist"):
        JdbcSourceConfig.from_props({**url, "query": "SELECT 1", "table.whitelist": "a",
                                     "topic.prefix": "t"})
    with pytest.raises(ConfigError, match=r"delete.enabled=true needs pk.mode=record_key"):
        JdbcSinkConfig.from_props({**url, "delete.enabled": "true"})
    with pytest.raises(ConfigError, match=r"insert.mode=upsert needs a pk.mode"):
        JdbcSinkConfig.from_props({**url, "insert.mode": "upsert"})
    secret = JdbcSinkConfig.from_props({**url, "connection.password": "hunter2"})
    assert "hunter2" not in repr(secret)


def test_tables_are_spread_round_robin_over_the_tasks() -> None:
    connector = JdbcSourceConnector()
    connector._config = JdbcSourceConfig.from_props({"connection.url": "jdbc:sqlite:x.db"})
    connector._props = {"connection.url": "jdbc:sqlite:x.db"}
    connector._tables = ["a", "b", "c", "d", "e"]
    configs = connector.task_configs(2)
    assert [json.loads(c["tables"]) for c in configs] == [["a", "c", "e"], ["b", "d"]]
    assert len(connector.task_configs(10)) == 5  # no task without a table
