"""What is confirmed to PostgreSQL, and resuming from a stored offset."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from connectors.postgres_cdc.stream import parse_lsn
from harness.postgres import PostgresServer
from harness.wait import wait_for
from tests.integration.postgres_cdc.conftest import TaskHarness


def confirmed_lsn(db: psycopg.Connection, slot: str = "debezium") -> int:
    row = db.execute(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s", (slot,)
    ).fetchone()
    assert row is not None
    return parse_lsn(row[0])


def test_only_fully_acknowledged_transactions_are_confirmed_and_resume_skips_delivered(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    first = harness(**{"snapshot.mode": "no_data"})
    with db.transaction():
        for i in range(1, 11):
            db.execute("INSERT INTO t VALUES (%s)", (i,))
    batch: list = []
    while len(batch) < 10:
        batch += first.poll(ack=False)
    first.ack(batch[:4])  # the log acknowledged 4 of the transaction's 10 records
    commit_lsn = batch[0].source_offset["lsn_commit"]
    # not confirmed past the transaction's commit record: the server sends it again
    assert confirmed_lsn(db) <= commit_lsn
    assert first.stored is not None and first.stored["seq"] == 3
    first.stop()  # crash: records 5..10 were read but never acknowledged

    db.execute("INSERT INTO t VALUES (11)")
    second = harness(first.stored, **{"snapshot.mode": "no_data"})
    second.poll_until(lambda rs: len(rs) >= 7)
    second.poll()
    assert [r.key["id"] for r in second.records] == list(range(5, 12))  # no loss, no doubles
    wait_for(lambda: confirmed_lsn(db) > commit_lsn, "the slot to confirm the transaction")


def test_heartbeats_move_a_quiet_databases_slot(
    db: psycopg.Connection,
    harness: Callable[..., TaskHarness],
    postgres: PostgresServer,
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    db.execute("CREATE TABLE heartbeat (id int PRIMARY KEY, ts timestamptz)")
    h = harness(**{
        "snapshot.mode": "no_data",
        "heartbeat.interval.ms": "100",
        "heartbeat.action.query": "INSERT INTO heartbeat VALUES (1, now()) "
                                  "ON CONFLICT (id) DO UPDATE SET ts = now()",
        "table.include.list": "public.t",
    })
    before = confirmed_lsn(db)
    with postgres.connect() as other:  # WAL written by another database only
        other.execute("CREATE TABLE IF NOT EXISTS busy (x int)")
        other.execute("INSERT INTO busy SELECT generate_series(1, 1000)")
        target = parse_lsn(other.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0])

    def moved() -> bool:
        h.poll()
        return confirmed_lsn(db) >= target

    wait_for(moved, "the slot to confirm past other databases' WAL", timeout_s=20)
    beats = [r for r in h.records if r.topic == "__debezium-heartbeat.srv"]
    assert beats and beats[0].key == {"serverName": "srv"}
    assert beats[0].key_schema.name == "io.debezium.connector.common.ServerNameKey"
    assert set(beats[0].value) == {"ts_ms"}
    assert (beats[0].key_schema.version, beats[0].value_schema.version) == (1, 1)  # Debezium 3
    assert confirmed_lsn(db) > before
    assert db.execute("SELECT count(*) FROM heartbeat").fetchone()[0] == 1
    assert not [r for r in h.records if r.topic.startswith("srv.")]  # heartbeat table excluded


def test_a_broken_stream_is_reopened_without_loss_or_doubles(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness(**{"snapshot.mode": "no_data"})
    for i in range(1, 6):
        db.execute("INSERT INTO t VALUES (%s)", (i,))
    batch: list = []
    while len(batch) < 5:
        batch += h.poll(ack=False)  # read, not yet acknowledged when the stream breaks
    db.execute(
        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
        "WHERE slot_name = 'debezium'"
    )
    for i in range(6, 11):
        db.execute("INSERT INTO t VALUES (%s)", (i,))
    h.poll_until(lambda rs: len(rs) >= 10)
    h.poll()
    assert h.retriable_errors  # the break was seen and reported as retriable
    assert [r.key["id"] for r in h.records] == list(range(1, 11))
    assert h.task.details()["phase"] == "streaming"


def test_slot_drop_on_stop(db: psycopg.Connection, harness: Callable[..., TaskHarness]) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness(**{"slot.drop.on.stop": "true", "slot.name": "temporary"})
    db.execute("INSERT INTO t VALUES (1)")
    h.poll_until(lambda rs: len(rs) >= 1)
    assert db.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 1
    h.stop()
    assert db.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 0
