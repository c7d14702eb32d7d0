"""CDC and JDBC pipelines on two ``sluice distributed`` workers, and the death of the
worker that runs them.

A PostgreSQL CDC source (Debezium-shaped events) and a JDBC sink that writes those
rows to another table run on a two-worker cluster. Rows keep arriving while the
worker running the CDC task is killed with SIGKILL: the survivor takes the task over
(from the offsets topic) and the sink table ends up with every row, once (the sink
upserts by key, so a replayed event changes nothing).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess, put_config
from harness.postgres import PostgresServer
from harness.standalone_process import wait_for_rest

TOTAL = 1500


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "broker").start()
    yield process
    process.stop()


@pytest.mark.slow
def test_cdc_to_jdbc_survives_the_death_of_the_worker_running_it(
    tmp_path: Path, broker: BrokerProcess, postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE orders (id int PRIMARY KEY, note text)")
        conn.execute("CREATE TABLE orders_copy (id int PRIMARY KEY, note text)")
    workers = [
        DistributedProcess(
            tmp_path / name,
            bootstrap=broker.bootstrap,
            group_id="db-cluster",
            **{"scheduled.rebalance.max.delay.ms": "1000"},
        )
        for name in ("d1", "d2")
    ]
    try:
        for worker in workers:
            worker.start()
        put_config(workers[0], "orders-cdc", {
            "connector.class": "PostgresConnector",
            "database.hostname": postgres.host,
            "database.port": str(postgres.port),
            "database.user": "postgres",
            "database.dbname": pg_database,
            "topic.prefix": "dist",
            "slot.name": "dist_slot",
            "poll.interval.ms": "100",
            "table.include.list": "public.orders",
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        })  # fmt: skip
        put_config(workers[1], "orders-copy", {
            "connector.class": "JdbcSinkConnector",
            "connection.url": postgres.url(pg_database, jdbc=True),
            "connection.user": "postgres",
            "topics": "dist.public.orders",
            "table.name.format": "orders_copy",
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "pk.fields": "id",
        })  # fmt: skip
        for worker in workers:
            worker.wait_running("orders-cdc")
            worker.wait_running("orders-copy")

        def write() -> None:
            with postgres.connect(pg_database) as conn:
                for i in range(1, TOTAL + 1):
                    conn.execute("INSERT INTO orders VALUES (%s, %s)", (i, f"order {i}"))
                    if i % 100 == 0:
                        time.sleep(0.05)

        def copied() -> int:
            with postgres.connect(pg_database) as conn:
                row = conn.execute("SELECT count(*) FROM orders_copy").fetchone()
                return int(row[0]) if row else 0

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        wait_for_rest(lambda: copied() > 200, "rows flowing through both pipelines")
        owner = workers[0].task_owners("orders-cdc")[0]
        victim = next(w for w in workers if w.worker_id == owner)
        survivor = next(w for w in workers if w is not victim)
        victim.stop(signal.SIGKILL)
        writer.join(120)
        wait_for_rest(
            lambda: survivor.task_owners("orders-cdc") == [survivor.worker_id]
            and survivor.running("orders-cdc")
            and survivor.running("orders-copy"),
            "both pipelines on the survivor",
            timeout_s=60,
        )
        wait_for_rest(lambda: copied() == TOTAL, f"all {TOTAL} rows copied", timeout_s=120)
        with postgres.connect(pg_database) as conn:
            differences = conn.execute(
                "SELECT count(*) FROM orders o FULL JOIN orders_copy c USING (id) "
                "WHERE o.note IS DISTINCT FROM c.note"
            ).fetchone()
        assert differences == (0,)
    finally:
        for worker in workers:
            worker.close()
        with postgres.connect(pg_database) as conn:  # let the database be dropped afterwards
            wait_for_rest(lambda: conn.execute(
                "SELECT bool_and(active_pid IS NULL) IS NOT FALSE FROM pg_replication_slots"
            ).fetchone()[0], "the walsenders to exit")
