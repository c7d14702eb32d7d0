"""fields.whitelist / fields.include.list: the value fields JdbcSink writes."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.api import ConfigError, DataError, SinkRecord, struct
from connectors.api.schema import INT64, OPTIONAL_STRING
from connectors.jdbc.config import JdbcSinkConfig
from harness.postgres import PostgresServer
from tests.unit.connectors.jdbc.test_jdbc_sink_task import KEY, pg_rows, start_task

ABC = struct(("a", INT64), ("b", OPTIONAL_STRING), ("c", OPTIONAL_STRING))
AC = struct(("a", INT64), ("c", OPTIONAL_STRING))


def rec(offset: int, value: dict[str, Any], schema: Any = ABC) -> SinkRecord:
    return SinkRecord(topic="items", partition=0, kafka_offset=offset, key={"id": offset},
                      key_schema=KEY, value=value, value_schema=schema)


def columns(postgres: PostgresServer, db: str) -> list[str]:
    rows = pg_rows(postgres, db, "SELECT column_name FROM information_schema.columns "
                                 "WHERE table_name = 'items' ORDER BY ordinal_position")
    return [r[0] for r in rows]


def test_only_listed_fields_are_created_and_written(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **{
        "auto.create": "true", "fields.whitelist": "a, c"})
    task.put([rec(0, {"a": 1, "b": "skip", "c": "x"}), rec(1, {"a": 2, "b": None, "c": "y"})])
    task.stop()
    assert columns(postgres, pg_database) == ["a", "c"]
    assert pg_rows(postgres, pg_database, "SELECT a, c FROM items ORDER BY a") == [
        (1, "x"), (2, "y")]


def test_upsert_by_a_listed_value_field(postgres: PostgresServer, pg_database: str) -> None:
    task = start_task(postgres.url(pg_database), **{
        "auto.create": "true", "auto.evolve": "true", "fields.include.list": "a,c",
        "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "a"})
    task.put([rec(0, {"a": 1, "b": "skip", "c": "x"}), rec(1, {"a": 1, "b": "skip", "c": "x2"}),
              rec(2, {"a": 2, "b": "skip", "c": "y"})])
    # A record with only the listed fields fits the same table (nothing to evolve).
    task.put([rec(3, {"a": 2, "c": "y2"}, AC)])
    task.stop()
    assert columns(postgres, pg_database) == ["a", "c"]
    assert pg_rows(postgres, pg_database, "SELECT a, c FROM items ORDER BY a") == [
        (1, "x2"), (2, "y2")]


def test_record_key_columns_are_written_besides_the_listed_fields(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **{
        "auto.create": "true", "fields.whitelist": "c",
        "insert.mode": "upsert", "pk.mode": "record_key"})
    task.put([rec(7, {"a": 1, "b": "skip", "c": "x"})])
    task.stop()
    assert columns(postgres, pg_database) == ["id", "c"]
    assert pg_rows(postgres, pg_database, "SELECT id, c FROM items") == [(7, "x")]


def test_a_listed_field_the_record_lacks_is_a_data_error_and_nothing_is_lost(
    postgres: PostgresServer, pg_database: str
) -> None:
    task = start_task(postgres.url(pg_database), **{
        "auto.create": "true", "fields.whitelist": "a,c"})
    with pytest.raises(DataError, match=r"items-0@1 has no field\(s\) c of fields\.whitelist"):
        task.put([rec(0, {"a": 1, "c": "x"}, AC), rec(1, {"a": 2}, struct(("a", INT64)))])
    task.put([rec(0, {"a": 1, "c": "x"}, AC)])  # the runtime retries the good one alone
    task.stop()
    assert pg_rows(postgres, pg_database, "SELECT a, c FROM items") == [(1, "x")]


def test_both_names_at_once_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"fields\.whitelist or fields\.include\.list"):
        JdbcSinkConfig.from_props({"connection.url": "sqlite:///x", "fields.whitelist": "a",
                                   "fields.include.list": "b"})
