"""The CDC task's own metrics on a real worker's ``GET /metrics`` (issue 20):
Debezium's snapshot and streaming names, and the slot's WAL lag in bytes; the
snapshot's progress in ``sluice connectors status``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from tests.support.scrape import sample, scrape

NAME = "pgm"


def test_snapshot_and_streaming_metrics_count_what_was_captured(
    fresh_worker: Callable[..., StandaloneProcess], postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE big (id int PRIMARY KEY, note text)")
        conn.execute("CREATE TABLE small (id int PRIMARY KEY)")
        conn.execute("INSERT INTO big SELECT i, 'x' FROM generate_series(1, 250) i")
        conn.execute("INSERT INTO small VALUES (1), (2), (3)")
        conn.execute("ANALYZE big")
        conn.execute("ANALYZE small")
    worker = fresh_worker().start()
    worker.write_pipeline(NAME, properties(
        name=NAME, connector_class="PostgresConnector", database_hostname=postgres.host,
        database_port=postgres.port, database_user="postgres", database_dbname=pg_database,
        topic_prefix=NAME, slot_name="pgm_slot", poll_interval_ms=100, snapshot_fetch_size=40,
    ))
    task = {"connector": NAME, "task": "0", "plugin": "postgres", "name": NAME}
    snap, stream = {**task, "context": "snapshot"}, {**task, "context": "streaming"}
    wait_for_rest(
        lambda: sample(scrape(worker.url), "debezium_metrics_snapshotcompleted", **snap) == 1,
        "the snapshot reported completed",
    )
    samples = scrape(worker.url)
    assert sample(samples, "debezium_metrics_snapshotrunning", **snap) == 0
    assert sample(samples, "debezium_metrics_totaltablecount", **snap) == 2
    assert sample(samples, "debezium_metrics_remainingtablecount", **snap) == 0
    assert sample(samples, "debezium_metrics_rowsscanned", **snap, table="public.big") == 250
    assert sample(samples, "debezium_metrics_rowsscanned", **snap, table="public.small") == 3
    assert sample(samples, "debezium_metrics_totalnumberofeventsseen", **snap) == 253
    rows_estimated = "sluice_plugin_postgres_cdc_snapshot_rows_estimated"
    labels = {"connector": NAME, "task": "0"}
    assert sample(samples, rows_estimated, **labels, table="public.big") == 250
    assert sample(samples, rows_estimated, **labels, table="public.small") == 3
    # the same progress in `sluice connectors status`, from the REST status
    status = subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", "connectors", "status", NAME,
         "--url", worker.url], capture_output=True, text=True, timeout=60,
    )
    assert status.returncode == 0, status.stderr
    lines = [line.strip() for line in status.stdout.splitlines()]
    assert "snapshot: done, 253/253 (100%) rows" in lines
    assert "public.big    250/250 (100%)  done" in lines
    assert "public.small  3/3 (100%)  done" in lines

    with postgres.connect(pg_database) as conn:
        conn.execute("INSERT INTO big SELECT i, 'y' FROM generate_series(251, 255) i")
        conn.execute("DELETE FROM small WHERE id = 1")
    wait_for_rest(
        lambda: sample(scrape(worker.url), "debezium_metrics_totalnumberofeventsseen",
                       **stream) == 6,
        "the five inserts and the delete counted as streamed events",
    )
    samples = scrape(worker.url)
    assert sample(samples, "debezium_metrics_connected", **stream) == 1
    assert (sample(samples, "debezium_metrics_millisecondsbehindsource", **stream) or -1) >= 0

    def server_lag() -> int:
        with postgres.connect(pg_database) as conn:
            row = conn.execute(
                "SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint "
                "FROM pg_replication_slots WHERE slot_name = 'pgm_slot'"
            ).fetchone()
        assert row is not None
        return int(row[0])

    wait_for_rest(
        lambda: sample(scrape(worker.url), "sluice_plugin_postgres_cdc_wal_lag_bytes", **labels)
        == server_lag(),
        "the WAL lag gauge to agree with the server's pg_current_wal_lsn() - confirmed_flush_lsn",
    )
