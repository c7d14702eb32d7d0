"""CDC -> ExtractNewRecordState -> JDBC sink keeps a replica equal to the source table."""

from __future__ import annotations

import random

import psycopg
import pytest

from connect_worker.herder.standalone import StandaloneHerder
from harness.postgres import PostgresServer
from harness.wait import wait_for
from tests.integration.postgres_cdc.conftest import cdc_props

JSON = "org.apache.kafka.connect.json.JsonConverter"
ROWS = "SELECT id, name, qty, price, flag FROM {} ORDER BY id"


def workload(conn: psycopg.Connection, rng: random.Random, first_id: int, ops: int) -> None:
    """Random inserts, updates (some changing the key) and deletes in small transactions."""
    next_id = first_id
    for _ in range(ops // 4):
        with conn.transaction():
            for _ in range(4):
                choice, target = rng.random(), rng.randrange(1, next_id)
                if choice < 0.4:
                    conn.execute(
                        "INSERT INTO items VALUES (%s, %s, %s, %s, %s)",
                        (next_id, f"n{next_id}", rng.randrange(1000), rng.randrange(10**6) / 100,
                         rng.random() < 0.5),
                    )
                    next_id += 1
                elif choice < 0.75:
                    conn.execute(
                        "UPDATE items SET qty = qty + 1, name = %s, price = NULL WHERE id = %s",
                        (f"u{rng.randrange(100)}", target),
                    )
                elif choice < 0.8:
                    conn.execute(
                        "UPDATE items SET id = %s WHERE id = %s", (next_id, target)
                    )
                    next_id += 1
                else:
                    conn.execute("DELETE FROM items WHERE id = %s", (target,))


@pytest.mark.slow
def test_replica_equals_source_under_random_workload(
    herder: StandaloneHerder, postgres: PostgresServer, pg_database: str,
    db: psycopg.Connection,
) -> None:
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, qty int8, "
        "price numeric(10, 2), flag boolean)"
    )
    db.execute(
        "INSERT INTO items SELECT g, 'n' || g, g, g / 4.0, g % 2 = 0 FROM generate_series(1, 200) g"
    )
    with postgres.database("replica") as target:
        herder.put_connector_config("cdc", cdc_props(
            postgres, pg_database, **{"topic.prefix": "rep", "key.converter": JSON,
                                      "value.converter": JSON}), allow_replace=True)
        herder.put_connector_config("replica", {
            "name": "replica",
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics": "rep.public.items",
            "connection.url": postgres.url(target, jdbc=True),
            "connection.user": "postgres",
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "delete.enabled": "true",
            "auto.create": "true",
            "table.name.format": "items",
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "key.converter": JSON,
            "value.converter": JSON,
        }, allow_replace=True)
        def streaming() -> bool:
            tasks = herder.connector_status("cdc").tasks
            return bool(tasks) and tasks[0].details.get("phase") == "streaming"

        wait_for(streaming, "the snapshot to end and streaming to start")
        workload(db, random.Random(11), 201, 600)

        with postgres.connect(target) as replica:
            def same() -> bool:
                try:
                    mirrored = replica.execute(ROWS.format("items")).fetchall()
                except psycopg.errors.UndefinedTable:
                    return False
                return mirrored == db.execute(ROWS.format("items")).fetchall()

            wait_for(same, "the replica to equal the source", timeout_s=60)
            count = replica.execute("SELECT count(*) FROM items").fetchone()[0]
        assert count > 150
        details = herder.connector_status("cdc").tasks[0].details
        assert details["phase"] == "streaming"
        assert details["snapshot"]["tables"]["public.items"]["rows"] == 200
        assert details["events"] > 0
        herder.delete_connector("replica")
        herder.delete_connector("cdc")
        wait_for(lambda: db.execute(  # the databases can be dropped once the slot is free
            "SELECT active_pid IS NULL FROM pg_replication_slots WHERE slot_name = 'debezium'"
        ).fetchone()[0], "the task's walsender to exit")
