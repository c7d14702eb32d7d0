"""SIGKILL the worker mid-stream: after a restart no change is lost, and the only
duplicates are the records the log had but whose offsets were not yet committed."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable

import pytest

from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from log_engine.client import SyncConsumer, TopicPartition

TOPIC = "crash.public.events"
TOTAL = 3000


def read_ids(bootstrap: str, until: int) -> list[int]:
    """Ids of the create (and snapshot) events in the topic, in log order, once ``until``
    is in it."""
    consumer = SyncConsumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
    ids: list[int] = []
    try:
        consumer.assign([TopicPartition(TOPIC, 0)])
        deadline = time.monotonic() + 60
        while until not in ids and time.monotonic() < deadline:
            for record in consumer.poll(0.5):
                payload = json.loads(record.value)["payload"] if record.value else None
                if payload and payload["op"] in ("c", "r"):
                    ids.append(payload["after"]["id"])
        return ids
    finally:
        consumer.close()


def count_in_topic(bootstrap: str) -> int:
    consumer = SyncConsumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
    try:
        end = consumer.end_offsets([TopicPartition(TOPIC, 0)])
        return next(iter(end.values()))
    except Exception:
        return 0
    finally:
        consumer.close()


@pytest.mark.slow
def test_sigkill_mid_stream_loses_nothing(
    fresh_worker: Callable[..., StandaloneProcess], postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE events (id int PRIMARY KEY, note text)")
    worker = fresh_worker(**{"offset.flush.interval.ms": "300"}).start()
    worker.write_pipeline("crash", properties(
        name="crash",
        connector_class="PostgresConnector",
        database_hostname=postgres.host,
        database_port=postgres.port,
        database_user="postgres",
        database_dbname=pg_database,
        topic_prefix="crash",
        slot_name="crash_slot",
        poll_interval_ms=100,
        key_converter="org.apache.kafka.connect.json.JsonConverter",
        value_converter="org.apache.kafka.connect.json.JsonConverter",
    ))
    worker.wait_running("crash")

    def write() -> None:
        with postgres.connect(pg_database) as conn:
            for i in range(1, TOTAL + 1):
                conn.execute("INSERT INTO events VALUES (%s, 'x')", (i,))
                if i % 200 == 0:
                    time.sleep(0.05)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    offsets = worker.root / "connect.offsets"
    wait_for_rest(lambda: count_in_topic(worker.bootstrap) > 300 and offsets.exists()
             and offsets.stat().st_size > 0, "records and a stored offset before the crash")
    worker.stop(signal.SIGKILL)
    writer.join(60)
    worker.start()
    worker.wait_running("crash")

    ids = read_ids(worker.bootstrap, TOTAL)
    details = worker.status("crash")["tasks"][0]["details"]  # GET /connectors/crash/status
    assert details["phase"] == "streaming" and details["slot"] == "crash_slot"
    missing = sorted(set(range(1, TOTAL + 1)) - set(ids))
    assert not missing, (  # nothing lost
        f"{len(missing)} missing from {missing[0]}; status {worker.status('crash')}; "
        f"log:\n{worker.log_text()[-3000:]}")
    # Duplicates come from one rewind to the last committed offset: the log is
    # 1..m, then k..TOTAL with k <= m + 1 (the records k..m were in the log, uncommitted).
    worker.stop()
    with postgres.connect(pg_database) as conn:  # let the database be dropped afterwards
        wait_for_rest(lambda: conn.execute(
            "SELECT active_pid IS NULL FROM pg_replication_slots WHERE slot_name = 'crash_slot'"
        ).fetchone()[0], "the worker's walsender to exit")
    rewind = next((i for i in range(1, len(ids)) if ids[i] <= ids[i - 1]), len(ids))
    before, after = ids[:rewind], ids[rewind:]
    assert before == list(range(1, len(before) + 1))
    if after:
        assert sorted(after) == list(range(min(after), TOTAL + 1))
        assert min(after) <= len(before) + 1
