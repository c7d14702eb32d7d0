"""JdbcSink through the runtime: topics with JsonConverter records -> PostgreSQL tables."""

from __future__ import annotations

from collections.abc import Callable

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State
from connectors.api import struct
from connectors.api.schema import INT64, OPTIONAL_STRING
from connectors.jdbc.sink import JdbcSinkConnector
from harness.broker_process import BrokerProcess
from harness.postgres import PASSWORD_USER, PostgresServer
from harness.wait import wait_for
from tests.integration.jdbc.helpers import produce_connect, rows, task_state, task_trace
from tests.support.log_reading import read_all

MakeHerder = Callable[..., StandaloneHerder]
KEY = struct(("id", INT64))
VALUE = struct(("id", INT64), ("name", OPTIONAL_STRING))


def sink_config(postgres: PostgresServer, db: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "topics": topic,
        "connection.url": postgres.url(db, jdbc=True),
        "connection.user": "postgres",
        "table.name.format": "out_${topic}",
        **extra,
    }


def test_upsert_with_tombstones_deletes(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, pg_database: str,
    topic_name: str,
) -> None:
    produce_connect(broker, topic_name, [
        (KEY, {"id": 1}, VALUE, {"id": 1, "name": "one"}),
        (KEY, {"id": 2}, VALUE, {"id": 2, "name": "two"}),
        (KEY, {"id": 1}, VALUE, {"id": 1, "name": "uno"}),
        (KEY, {"id": 2}, None, None),
        (KEY, {"id": 3}, VALUE, {"id": 3, "name": "three"}),
    ])
    herder = make_herder()
    herder.put_connector_config("sink", sink_config(
        postgres, pg_database, topic_name, **{
            "insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true",
            "auto.create": "true",
        }), allow_replace=False)
    table = f'"out_{topic_name}"'
    expected = [(1, "uno"), (3, "three")]
    wait_for(lambda: rows(postgres, pg_database, f"SELECT id, name FROM {table} ORDER BY id")
             == expected, "the upserted rows")
    details = herder.connector_status("sink").tasks[0].details or {}
    assert details.get("rows_deleted") == 1


def test_bad_row_goes_to_the_dlq_and_the_rest_lands(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, pg_database: str,
    topic_name: str,
) -> None:
    table = f"out_{topic_name}"
    with postgres.connect(pg_database) as conn:
        conn.execute(f'CREATE TABLE "{table}" (id bigint, name integer)')
    good = struct(("id", INT64), ("name", INT64))
    produce_connect(broker, topic_name, [
        (None, None, good, {"id": 1, "name": 10}),
        (None, None, VALUE, {"id": 2, "name": "not a number"}),
        (None, None, good, {"id": 3, "name": 30}),
    ])
    dlq = f"{topic_name}-dlq"
    herder = make_herder()
    herder.put_connector_config("sink", sink_config(
        postgres, pg_database, topic_name, **{
            "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        }), allow_replace=False)
    [dead] = read_all(broker, dlq, 1)
    assert b"not a number" in (dead.value or b"")
    headers = dict(dead.headers)
    assert b"invalid input syntax for type integer" in headers[
        "__connect.errors.exception.message"]
    wait_for(lambda: rows(postgres, pg_database, f'SELECT id, name FROM "{table}" ORDER BY id')
             == [(1, 10), (3, 30)], "the good rows")


def test_wrong_password_fails_the_task_and_check_reports_it(
    make_herder: MakeHerder, postgres: PostgresServer, pg_database: str, topic_name: str,
) -> None:
    config = sink_config(postgres, pg_database, topic_name, **{
        "connection.user": PASSWORD_USER, "connection.password": "wrong", "auto.create": "true",
    })
    herder = make_herder(**{"task.restart.enabled": "false"})
    problems = JdbcSinkConnector().check(config)
    assert "password authentication failed" in str(problems)
    herder.put_connector_config("sink", config, allow_replace=False)
    wait_for(lambda: task_state(herder, "sink") is State.FAILED, "the task to fail")
    assert "password authentication failed" in task_trace(herder, "sink")


def test_unreachable_host_and_missing_table(
    make_herder: MakeHerder, broker: BrokerProcess, postgres: PostgresServer, pg_database: str,
    topic_name: str,
) -> None:
    herder = make_herder(**{"task.restart.enabled": "false"})
    unreachable = sink_config(postgres, pg_database, topic_name, **{
        "connection.url": "jdbc:postgresql://127.0.0.1:1/nowhere",
    })
    assert "Connection refused" in str(JdbcSinkConnector().check(unreachable))
    missing = sink_config(postgres, pg_database, topic_name)
    assert f"table out_{topic_name} (for topic {topic_name}) does not exist" in str(
        JdbcSinkConnector().check(missing))
    herder.put_connector_config("sink", unreachable, allow_replace=False)
    wait_for(lambda: task_state(herder, "sink") is State.FAILED, "the task to fail")
    assert "Connection refused" in task_trace(herder, "sink")
    produce_connect(broker, topic_name, [(None, None, VALUE, {"id": 1, "name": "kept"})])
    herder.put_connector_config("sink2", missing, allow_replace=False)
    wait_for(lambda: task_state(herder, "sink2") is State.FAILED, "the second task to fail")
    assert f"table out_{topic_name} does not exist" in task_trace(herder, "sink2")
    # Nothing lost: once the table exists, a restarted task writes the record.
    with postgres.connect(pg_database) as conn:
        conn.execute(f'CREATE TABLE "out_{topic_name}" (id bigint, name text)')
    herder.restart_task("sink2", 0)
    wait_for(lambda: rows(postgres, pg_database, f'SELECT id, name FROM "out_{topic_name}"')
             == [(1, "kept")], "the record after the restart")
