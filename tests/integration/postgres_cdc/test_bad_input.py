"""Bad input: check() names each problem before start, and the task FAILS with the reason.

Nothing is lost either way: a failed start creates no slot (or leaves another
consumer's slot where it was), so no change is confirmed without being read.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connectors.postgres_cdc.source import PostgresCdcConnector
from connectors.postgres_cdc.stream import ReplicationStream
from harness.postgres import PASSWORD_USER, PostgresServer
from harness.wait import wait_for
from tests.integration.postgres_cdc.conftest import cdc_props


@pytest.fixture(scope="module")
def replica_level_server() -> Iterator[PostgresServer]:
    """A second server with wal_level=replica (no logical decoding)."""
    root = Path(tempfile.mkdtemp(prefix="sluice-pg-replica-"))
    root.chmod(0o755)
    server = PostgresServer(root / "cluster", wal_level="replica").start()
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


def failed_trace(herder: StandaloneHerder, props: dict[str, str]) -> str:
    herder.put_connector_config(props["name"], props, allow_replace=True)

    def failed() -> str | None:
        tasks = herder.connector_status(props["name"]).tasks
        if tasks and tasks[0].state.value == "FAILED":
            return tasks[0].trace or ""
        return None

    return wait_for(failed, f"task of {props['name']} FAILED")


def slot_exists(db: psycopg.Connection, slot: str = "debezium") -> bool:
    row = db.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,))
    return row.fetchone() is not None


def test_wrong_password(
    herder: StandaloneHerder, postgres: PostgresServer, pg_database: str
) -> None:
    props = cdc_props(postgres, pg_database, **{
        "database.user": PASSWORD_USER, "database.password": "not-the-password"})
    problems = PostgresCdcConnector().check(props)
    assert len(problems) == 1 and "password authentication failed" in problems[0]
    assert PASSWORD_USER in problems[0]
    trace = failed_trace(herder, props)
    assert "password authentication failed" in trace
    assert "not-the-password" not in trace


def test_table_in_the_include_list_missing(
    herder: StandaloneHerder, postgres: PostgresServer, pg_database: str,
    db: psycopg.Connection,
) -> None:
    db.execute("CREATE TABLE present (id int PRIMARY KEY)")
    props = cdc_props(postgres, pg_database, **{"table.include.list": "public.present,public.nope"})
    problems = PostgresCdcConnector().check(props)
    assert problems == [
        f"table.include.list: no table matches 'public.nope' in database {pg_database!r}"]
    assert "no table matches 'public.nope'" in failed_trace(herder, props)
    assert not slot_exists(db)


def test_wal_level_not_logical(
    herder: StandaloneHerder, replica_level_server: PostgresServer
) -> None:
    dbname = replica_level_server.create_database()
    props = cdc_props(replica_level_server, dbname)
    problems = PostgresCdcConnector().check(props)
    assert len(problems) == 1 and "wal_level is 'replica'" in problems[0]
    assert "wal_level=logical" in failed_trace(herder, props)


def test_slot_already_in_use_by_another_consumer(
    herder: StandaloneHerder, postgres: PostgresServer, pg_database: str,
    db: psycopg.Connection,
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    db.execute("CREATE PUBLICATION dbz_publication FOR ALL TABLES")
    other = ReplicationStream(postgres.connect(pg_database, replication="database"))
    try:
        other.create_slot("debezium", export_snapshot=False)
        other.start("debezium", "dbz_publication")
        before = wait_for(lambda: db.execute(
            "SELECT confirmed_flush_lsn, active_pid FROM pg_replication_slots "
            "WHERE active_pid IS NOT NULL").fetchone(), "the other consumer to hold the slot")
        props = cdc_props(postgres, pg_database)
        problems = PostgresCdcConnector().check(props)
        assert len(problems) == 1
        assert "'debezium' is in use by another consumer" in problems[0]
        assert f"PID {before[1]}" in problems[0]
        assert "is in use by another consumer" in failed_trace(herder, props)
        after = db.execute(
            "SELECT confirmed_flush_lsn, active_pid FROM pg_replication_slots").fetchone()
        assert after == before  # the other consumer keeps its slot and position
    finally:
        other.close()


def test_publication_missing_with_autocreate_disabled(
    herder: StandaloneHerder, postgres: PostgresServer, pg_database: str,
    db: psycopg.Connection,
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    props = cdc_props(postgres, pg_database, **{
        "publication.autocreate.mode": "disabled", "publication.name": "mine"})
    problems = PostgresCdcConnector().check(props)
    assert len(problems) == 1
    assert problems[0].startswith("publication.name: publication 'mine' does not exist")
    assert "publication.autocreate.mode=disabled" in failed_trace(herder, props)
    assert not slot_exists(db)


def test_a_good_config_has_no_problems(
    postgres: PostgresServer, pg_database: str, db: psycopg.Connection
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    assert PostgresCdcConnector().check(cdc_props(postgres, pg_database)) == []


def test_sluice_validate_shows_the_problem(
    postgres: PostgresServer, pg_database: str, tmp_path: Path
) -> None:
    props = cdc_props(postgres, pg_database, **{"table.include.list": "public.nope"})
    pipeline = tmp_path / "cdc.properties"
    pipeline.write_text("".join(f"{key}={value}\n" for key, value in props.items()))
    result = subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", "validate", str(pipeline)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode != 0
    assert "table.include.list: no table matches 'public.nope'" in result.stdout + result.stderr
