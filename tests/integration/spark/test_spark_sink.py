"""SparkSink in an in-process worker: files, SQL over `records`, JDBC, and bad configs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State, TargetState
from harness.broker_process import BrokerProcess
from harness.postgres import PostgresServer
from harness.wait import wait_for
from tests.integration.spark.topics import LogTopic

pytestmark = pytest.mark.slow

WAIT_S = 120.0


def sink_config(broker: BrokerProcess, topic: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "SparkSink",
        "topics": topic,
        "spark.bootstrap.servers": broker.bootstrap,
        "spark.master": "local[2]",
        "checkpoint.location": str(tmp_path / "checkpoint"),
        "output.path": str(tmp_path / "out"),
        "trigger.available.now": "true",
        **extra,
    }


@dataclass
class SinkCase:
    """One test's herder, and SparkSink configs reading its topic and writing under tmp_path."""

    broker: BrokerProcess
    topic: LogTopic
    herder: StandaloneHerder
    tmp_path: Path

    @property
    def out(self) -> Path:
        return self.tmp_path / "out"

    def config(self, **extra: str) -> dict[str, str]:
        return sink_config(self.broker, self.topic.name, self.tmp_path, **extra)


@pytest.fixture
def sink(broker: BrokerProcess, topic: LogTopic, make_herder: Callable, tmp_path: Path) -> SinkCase:
    return SinkCase(broker, topic, make_herder(), tmp_path)


def task(herder: StandaloneHerder, name: str) -> Any:
    tasks = herder.connector_status(name).tasks
    return tasks[0] if tasks else None


def finished(herder: StandaloneHerder, name: str) -> bool:
    status = task(herder, name)
    if status is not None and status.state is State.FAILED:
        raise AssertionError(f"task failed:\n{status.trace}")
    return bool(status and status.details.get("query") == "FINISHED")


def failed(herder: StandaloneHerder, name: str) -> str | None:
    status = task(herder, name)
    return status.trace if status is not None and status.state is State.FAILED else None


def test_json_values_to_partitioned_parquet_with_sql_over_records(
    spark, topic: LogTopic, sink: SinkCase
) -> None:
    topic.create(2)
    rows = [{"id": i, "name": f"n{i}", "kind": "even" if i % 2 == 0 else "odd"} for i in range(40)]
    topic.produce(rows[:25], partition=0)
    topic.produce(rows[25:], partition=1)
    herder = sink.herder
    config = sink.config(
        **{
            "value.schema": "id INT, name STRING, kind STRING",
            "spark.sql": "SELECT id, upper(name) AS name, kind, _offset FROM records WHERE id < 30",
            "output.partition.by": "kind",
            "max.offsets.per.trigger": "10",
        },
    )
    herder.put_connector_config("spark-parquet", config, allow_replace=False)
    wait_for(lambda: finished(herder, "spark-parquet"), "the query to finish", WAIT_S)

    out = spark.read.parquet(str(sink.out)).collect()
    assert sorted((r.id, r.name, r.kind) for r in out) == [
        (i, f"N{i}", "even" if i % 2 == 0 else "odd") for i in range(30)
    ]
    details = task(herder, "spark-parquet").details
    assert details["batch_id"] >= 3  # 40 records, 10 a micro-batch (ids start at 0)
    assert details["end_offsets"] is not None
    assert task(herder, "spark-parquet").state is State.RUNNING


def test_inferred_schema_and_restart_from_the_checkpoint(
    spark, topic: LogTopic, sink: SinkCase
) -> None:
    topic.create()
    topic.produce([{"id": i, "score": i / 2} for i in range(10)])
    herder = sink.herder
    config = sink.config(**{"output.format": "json"})
    herder.put_connector_config("spark-json", config, allow_replace=False)
    wait_for(lambda: finished(herder, "spark-json"), "the first run", WAIT_S)
    herder.delete_connector("spark-json")

    topic.produce([{"id": i, "score": i / 2} for i in range(10, 15)])
    herder.put_connector_config("spark-json", config, allow_replace=False)
    wait_for(lambda: finished(herder, "spark-json"), "the second run", WAIT_S)
    out = spark.read.json(str(sink.out)).collect()
    assert sorted((r.id, r.score, r._offset) for r in out) == [(i, i / 2, i) for i in range(15)]


def test_jdbc_output_appends_to_a_postgres_table(
    spark,
    topic: LogTopic,
    sink: SinkCase,
    postgres: PostgresServer,
    pg_database: str,
) -> None:
    from harness.postgres import PASSWORD, PASSWORD_USER

    topic.create()
    topic.produce([{"id": i, "name": f"n{i}"} for i in range(12)])
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE people (id INT PRIMARY KEY, name TEXT)")
    herder = sink.herder
    config = sink.config(
        **{
            "value.schema": "id INT, name STRING",
            "spark.sql": "SELECT id, name FROM records",
            "output.format": "jdbc",
            "output.jdbc.url": postgres.url(pg_database, jdbc=True),
            "output.jdbc.table": "people",
            "output.jdbc.user": PASSWORD_USER,
            "output.jdbc.password": PASSWORD,
        },
    )
    herder.put_connector_config("spark-jdbc", config, allow_replace=False)
    wait_for(lambda: finished(herder, "spark-jdbc"), "the query to finish", WAIT_S)
    with postgres.connect(pg_database) as conn:
        got = conn.execute("SELECT id, name FROM people ORDER BY id").fetchall()
    assert got == [(i, f"n{i}") for i in range(12)]
    assert PASSWORD not in str(herder.connector_config("spark-jdbc"))


def test_unknown_output_format_is_refused_naming_the_key(sink: SinkCase) -> None:
    herder = sink.herder
    config = sink.config(**{"output.format": "avro"})
    with pytest.raises(Exception, match=r"output\.format"):
        herder.put_connector_config("spark-bad-format", config, allow_replace=False)
    result = herder.validate_config("SparkSink", config)
    assert result["error_count"] >= 1
    assert "output.format" in str(result)


def test_bad_ddl_and_bad_sql_fail_the_task_and_a_fixed_config_loses_nothing(
    spark, topic: LogTopic, sink: SinkCase
) -> None:
    topic.create()
    topic.produce([{"id": i} for i in range(6)])
    herder = sink.herder
    bad_ddl = sink.config(**{"value.schema": "id INTEGR,,"})
    herder.put_connector_config("spark-bad", bad_ddl, allow_replace=False)
    trace = wait_for(lambda: failed(herder, "spark-bad"), "the bad DDL to fail the task", WAIT_S)
    assert "value.schema: not a valid Spark DDL schema" in trace

    bad_sql = sink.config(**{"value.schema": "id INT", "spark.sql": "SELECT nope FROM"})
    herder.put_connector_config("spark-bad", bad_sql, allow_replace=True)
    wait_for(
        lambda: "spark.sql" in (failed(herder, "spark-bad") or ""), "the bad SQL to fail", WAIT_S
    )
    unknown = {**bad_sql, "spark.sql": "SELECT missing_column FROM records"}
    herder.put_connector_config("spark-bad", unknown, allow_replace=True)
    wait_for(
        lambda: "missing_column" in (failed(herder, "spark-bad") or ""),
        "unknown column to fail",
        WAIT_S,
    )

    fixed = {**bad_sql, "spark.sql": "SELECT id FROM records"}
    herder.put_connector_config("spark-bad", fixed, allow_replace=True)
    herder.restart_connector("spark-bad", include_tasks=True, only_failed=False)
    wait_for(lambda: finished(herder, "spark-bad"), "the fixed query to finish", WAIT_S)
    out = spark.read.parquet(str(sink.out)).collect()
    assert sorted(r.id for r in out) == list(range(6))


def test_a_query_failing_at_run_time_fails_the_task_with_the_spark_trace(
    spark,
    topic: LogTopic,
    sink: SinkCase,
    postgres: PostgresServer,
) -> None:
    topic.create()
    topic.produce([{"id": 1}])
    herder = sink.herder
    config = sink.config(
        **{
            "value.schema": "id INT",
            "output.format": "jdbc",
            "output.jdbc.url": postgres.url("no_such_database", jdbc=True),
            "output.jdbc.table": "t",
        },
    )
    herder.put_connector_config("spark-fails", config, allow_replace=False)
    trace = wait_for(
        lambda: failed(herder, "spark-fails"), "the query failure to fail the task", WAIT_S
    )
    assert "the Spark query failed" in trace
    assert "PSQLException" in trace  # the JVM cause, from the Spark trace


def test_pause_stops_the_query_and_resume_continues_from_the_checkpoint(
    spark, topic: LogTopic, sink: SinkCase
) -> None:
    topic.create()
    topic.produce([{"id": i} for i in range(10)])
    herder = sink.herder
    config = sink.config(**{"value.schema": "id INT"})
    del config["trigger.available.now"]
    config["trigger.interval.ms"] = "200"
    herder.put_connector_config("spark-pause", config, allow_replace=False)

    def written() -> list[int]:
        if not any(sink.out.glob("*.parquet")):
            return []
        frame = spark.read.schema("id INT").parquet(str(sink.out))
        return sorted(r.id for r in frame.collect())

    wait_for(lambda: written() == list(range(10)), "the first records", WAIT_S)
    herder.set_target_state("spark-pause", TargetState.PAUSED)
    wait_for(lambda: task(herder, "spark-pause").details.get("query") == "PAUSED", "PAUSED", WAIT_S)
    assert not [q for q in spark.streams.active if q.name.startswith("spark-pause")]

    topic.produce([{"id": i} for i in range(10, 20)])
    herder.set_target_state("spark-pause", TargetState.RUNNING)
    wait_for(lambda: written() == list(range(20)), "every record once after the resume", WAIT_S)
    assert task(herder, "spark-pause").details.get("query") == "RUNNING"
    herder.delete_connector("spark-pause")
