"""The initial snapshot: consistent with the stream, with progress, redone after a crash."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import psycopg
import pytest

from connectors.api import SourceRecord
from harness.postgres import PostgresServer
from harness.wait import wait_for
from tests.integration.postgres_cdc.conftest import TaskHarness

SENTINEL = -1


def rebuild(records: list[SourceRecord]) -> dict[int, int]:
    """The table's state from its change events, applied by key in order."""
    state: dict[int, int] = {}
    for record in records:
        if not isinstance(record.value, dict) or "op" not in record.value:
            continue
        op = record.value["op"]
        key = record.key["id"]
        if op == "d":
            state.pop(key, None)
        else:
            state[key] = record.value["after"]["v"]
    state.pop(SENTINEL, None)
    return state


def table_state(db: psycopg.Connection) -> dict[int, int]:
    return dict(db.execute("SELECT id, v FROM items WHERE id <> %s", (SENTINEL,)).fetchall())


class Writer(threading.Thread):
    """Random inserts, updates and deletes on ``items`` until stopped."""

    def __init__(self, postgres: PostgresServer, dbname: str, first_new_id: int) -> None:
        super().__init__(daemon=True)
        self._conn = postgres.connect(dbname)
        self._next_id = first_new_id
        self._stopping = threading.Event()
        self.writes = 0

    def run(self) -> None:
        rng = random.Random(7)
        with self._conn:
            while not self._stopping.is_set():
                with self._conn.transaction():
                    for _ in range(rng.randint(1, 5)):
                        self._one(rng)
            self._conn.execute("INSERT INTO items VALUES (%s, 0)", (SENTINEL,))

    def _one(self, rng: random.Random) -> None:
        choice = rng.random()
        target = rng.randrange(1, self._next_id)
        if choice < 0.4:
            self._conn.execute("INSERT INTO items VALUES (%s, %s)", (self._next_id, 1))
            self._next_id += 1
        elif choice < 0.8:
            self._conn.execute("UPDATE items SET v = v + 1 WHERE id = %s", (target,))
        else:
            self._conn.execute("DELETE FROM items WHERE id = %s", (target,))
        self.writes += 1

    def finish(self) -> None:
        self._stopping.set()
        self.join(30)


def _sentinel_seen(records: list[SourceRecord]) -> bool:
    return any(r.key == {"id": SENTINEL} and r.value for r in records[-50:])


@pytest.mark.slow
def test_snapshot_of_100k_rows_under_concurrent_writes_matches_the_table(
    db: psycopg.Connection,
    harness: Callable[..., TaskHarness],
    postgres: PostgresServer,
    pg_database: str,
) -> None:
    db.execute("CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)")
    db.execute("INSERT INTO items SELECT g, 0 FROM generate_series(1, 100000) g")
    db.execute("ANALYZE items")
    writer = Writer(postgres, pg_database, 100001)
    writer.start()
    h = harness(**{"snapshot.fetch.size": "5000", "max.batch.size": "5000"})
    h.poll()
    progress = h.task.details()["snapshot"]["tables"]["public.items"]
    assert progress["estimated"] == 100000 and 0 < progress["rows"] <= 100000
    h.poll_until(lambda rs: any(r.value["source"]["snapshot"] == "last" for r in rs[-5000:]),
                 timeout_s=60)
    writer.finish()
    assert writer.writes > 0
    h.poll_until(_sentinel_seen, timeout_s=60)

    snapshot = [r for r in h.records if r.value and r.value["op"] == "r"]
    assert snapshot[0].value["source"]["snapshot"] == "first"
    assert snapshot[-1].value["source"]["snapshot"] == "last"
    assert rebuild(h.records) == table_state(db)
    done = h.task.details()["snapshot"]["tables"]["public.items"]
    assert done["done"] and done["rows"] == len(snapshot)


def test_a_snapshot_interrupted_by_a_crash_is_redone(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)")
    db.execute("INSERT INTO items SELECT g, 0 FROM generate_series(1, 3000) g")
    first = harness(**{"snapshot.fetch.size": "500", "max.batch.size": "500"})
    first.poll()  # 500 rows delivered and acknowledged, then the worker dies
    assert first.stored is not None and first.stored["snapshot"] is True
    assert first.stored["last_snapshot_record"] is False
    first.stop()
    db.execute("UPDATE items SET v = 9 WHERE id <= 10")
    db.execute("DELETE FROM items WHERE id = 2000")

    second = harness(first.stored, **{"snapshot.fetch.size": "500", "max.batch.size": "500"})
    db.execute("INSERT INTO items VALUES (%s, 1)", (SENTINEL,))
    second.poll_until(_sentinel_seen)
    redone = [r for r in second.records if r.value and r.value["op"] == "r"]
    assert len(redone) == 2999  # the whole table again, as of the new snapshot
    assert rebuild(first.records + second.records) == table_state(db)


def test_snapshot_modes_initial_only_always_and_when_needed(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)")
    db.execute("INSERT INTO items SELECT g, 0 FROM generate_series(1, 5) g")
    only = harness(**{"snapshot.mode": "initial_only", "slot.name": "only"})
    only.poll_until(lambda rs: len(rs) >= 5)
    db.execute("INSERT INTO items VALUES (6, 0)")
    only.poll()
    assert len(only.records) == 5 and only.task.details()["phase"] == "snapshot-only-done"
    only.stop()
    assert only.stored is not None and only.stored["last_snapshot_record"] is True
    done = harness(only.stored, **{"snapshot.mode": "initial_only", "slot.name": "only"})
    done.poll()
    assert done.records == [] and done.task.details()["phase"] == "snapshot-only-done"
    done.stop()

    first = harness(**{"snapshot.mode": "no_data", "slot.name": "again"})
    db.execute("INSERT INTO items VALUES (7, 0)")
    first.poll_until(lambda rs: len(rs) >= 1)
    assert [r.value["op"] for r in first.records] == ["c"]
    first.stop()

    # always: a stored offset and a live slot, still a snapshot first, then the stream
    again = harness(first.stored, **{"snapshot.mode": "always", "slot.name": "again"})
    db.execute("INSERT INTO items VALUES (8, 0)")
    again.poll_until(lambda rs: any(r.key == {"id": 8} for r in rs))
    assert sorted(r.key["id"] for r in again.records if r.value["op"] == "r") == list(range(1, 8))
    assert [r.key["id"] for r in again.records if r.value["op"] == "c"] == [8]
    again.stop()

    # when_needed: the offset's slot is gone, so the state is read again
    wait_for(lambda: db.execute(
        "SELECT active_pid IS NULL FROM pg_replication_slots WHERE slot_name = 'again'"
    ).fetchone()[0], "the stopped task's walsender to exit")
    db.execute("SELECT pg_drop_replication_slot('again')")
    needed = harness(again.stored, **{"snapshot.mode": "when_needed", "slot.name": "again"})
    needed.poll_until(lambda rs: len(rs) >= 8)
    assert {r.value["op"] for r in needed.records} == {"r"}
    assert rebuild(needed.records) == table_state(db)
