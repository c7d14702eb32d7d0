"""PostgreSQL CDC: row updates -> PostgresConnector -> the log, throughput and latency.

Starts a PostgreSQL 15 (``wal_level=logical``) and ``sluice standalone`` as a
user would (embedded broker, a pipeline file with the Debezium class name and
Kafka Connect's default converter, JsonConverter with schemas). Then:

- ``pipeline_events_s``: N rows are updated (transactions of 1000) while the
  connector is stopped; it is started on its existing slot and the rate at
  which the change events reach the log (the topic's end offset) is timed from
  the first event to the last;
- ``latency_*``: updates paced at ``--rate`` events/s (transactions of 50 every
  10 ms); for each event, commit time (``source.ts_ms``) -> the record's log
  timestamp (``record_ms``, set when the producer took it) and -> a plain
  consumer receiving it (``consumer_ms``); p50/p99;
- baselines from the same WAL: ``raw_stream_events_s`` (psycopg reading the
  pgoutput stream, bytes only, no parsing) and ``decode_events_s`` (our
  parser + Debezium events in-process, no log; also as CPU time per event).

Prints one JSON line. ``--quick``: 20k updates and 4 s of paced load.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from connectors.postgres_cdc.stream import ReplicationStream
from harness.broker_process import free_port
from harness.postgres import PostgresServer
from log_engine.client import SyncConsumer, TopicPartition

TOPIC = "bench.public.items"
_TIMEOUT_S = 600.0


def prepare(server: PostgresServer, rows: int) -> str:
    db = server.create_database("bench")
    with server.connect(db) as conn:
        conn.execute(
            "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL, note text, "
            "touched timestamptz)"
        )
        conn.execute(
            "INSERT INTO items SELECT g, 0, 'row ' || g, now() FROM generate_series(1, %s) g",
            (rows,),
        )
        conn.execute("CREATE PUBLICATION dbz_publication FOR ALL TABLES")
        for slot in ("pipeline", "raw", "decode"):
            conn.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (slot,))
    return db


def update_all(server: PostgresServer, db: str, rows: int, per_tx: int = 1000) -> None:
    with server.connect(db) as conn:
        for start in range(1, rows + 1, per_tx):
            conn.execute(
                "UPDATE items SET v = v + 1, touched = clock_timestamp() "
                "WHERE id >= %s AND id < %s",
                (start, start + per_tx),
            )


def raw_stream(server: PostgresServer, db: str, rows: int) -> float:
    """psycopg reading the slot's pgoutput messages, counting Update messages only."""
    stream = ReplicationStream(server.connect(db, replication="database"))
    try:
        stream.start("raw", "dbz_publication")
        seen = 0
        started = time.perf_counter()
        while seen < rows:
            data = stream.read(5.0)
            if data is None:
                raise RuntimeError(f"raw stream stalled at {seen}/{rows}")
            if data[0] == 0x77 and data[25] == 0x55:  # w + 'U'pdate
                seen += 1
        return rows / (time.perf_counter() - started)
    finally:
        stream.close()


def decode_in_process(server: PostgresServer, db: str, rows: int) -> tuple[float, float]:
    """Our task (parser + Debezium records) reading the slot, records acknowledged at once:
    events/s and CPU microseconds per event (the latter is steady on a busy machine)."""
    from connectors.postgres_cdc.task import PostgresCdcTask

    class Offsets:
        def offset(self, partition: Any) -> None:
            return None

    class Context:
        offset_reader = Offsets()
        task_id = 0

    task = PostgresCdcTask()
    task.initialize(Context())  # type: ignore[arg-type]
    task.start({
        "database.hostname": server.host, "database.port": str(server.port),
        "database.user": "postgres", "database.dbname": db, "topic.prefix": "bench",
        "slot.name": "decode", "snapshot.mode": "no_data", "max.batch.size": "5000",
    })
    try:
        seen = 0
        started, cpu_started = time.perf_counter(), time.process_time()
        while seen < rows:
            batch = task.poll()
            for record in batch:
                task.commit_record(record)
            task.commit()
            seen += len(batch)
            if time.perf_counter() - started > _TIMEOUT_S:
                raise RuntimeError(f"decode stalled at {seen}/{rows}")
        cpu_us = (time.process_time() - cpu_started) / rows * 1e6
        return rows / (time.perf_counter() - started), cpu_us
    finally:
        task.stop()


class Worker:
    """``sluice standalone`` with the CDC pipeline file written into its folder."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.pipelines = workdir / "pipelines"
        self.pipelines.mkdir(parents=True)
        self.broker_port = free_port()
        worker = workdir / "worker.properties"
        worker.write_text(
            f"embedded.broker.listeners=PLAINTEXT://127.0.0.1:{self.broker_port}\n"
            f"embedded.broker.log.dirs={workdir / 'log'}\n"
            f"listeners=http://127.0.0.1:{free_port()}\n"
            f"pipelines.dir={self.pipelines}\n"
            f"offset.storage.file.filename={workdir / 'offsets'}\n"
            f"connector.configs.file={workdir / 'connectors.json'}\n"
            "offset.flush.interval.ms=1000\n"
        )
        self.log = open(workdir / "standalone.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "connect_worker.cli", "--log-level", "warning",
             "standalone", str(worker)],
            stdout=self.log, stderr=subprocess.STDOUT,
        )

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker_port}"

    def add_pipeline(self, server: PostgresServer, db: str) -> None:
        (self.pipelines / "cdc.properties").write_text(
            "connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
            f"database.hostname={server.host}\ndatabase.port={server.port}\n"
            f"database.user=postgres\ndatabase.dbname={db}\ntopic.prefix=bench\n"
            "slot.name=pipeline\nsnapshot.mode=no_data\nmax.batch.size=5000\n"
            "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
            "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
        )

    def check(self) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"the worker exited; see {self.log.name}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)
        self.log.close()


def end_offset(consumer: SyncConsumer) -> int:
    try:
        return next(iter(consumer.end_offsets([TopicPartition(TOPIC, 0)]).values()))
    except Exception:
        return 0


def drain_rate(worker: Worker, server: PostgresServer, db: str, rows: int) -> dict[str, float]:
    consumer = SyncConsumer({"bootstrap.servers": worker.bootstrap})
    try:
        worker.add_pipeline(server, db)
        deadline = time.perf_counter() + _TIMEOUT_S
        first_count, first_at = 0, 0.0
        while (count := end_offset(consumer)) < rows:
            worker.check()
            now = time.perf_counter()
            if count and not first_at:
                first_count, first_at = count, now
            if now > deadline:
                raise RuntimeError(f"pipeline stopped at {count}/{rows}")
            time.sleep(0.02)
        elapsed = time.perf_counter() - first_at
        return {"events_s": (rows - first_count) / elapsed, "seconds": elapsed}
    finally:
        consumer.close()


def paced_latency(
    worker: Worker, server: PostgresServer, db: str, rows: int, rate: int, seconds: float
) -> dict[str, Any]:
    """Updates at ``rate`` events/s; per event commit -> log timestamp and -> consumer."""
    consumer = SyncConsumer({"bootstrap.servers": worker.bootstrap, "fetch.max.wait.ms": 5})
    tp = TopicPartition(TOPIC, 0)
    consumer.assign([tp])
    consumer.seek(tp, end_offset(consumer))
    per_tx, interval_s = 50, 50 / rate
    total = int(rate * seconds) // per_tx * per_tx
    done = threading.Event()

    def write() -> None:
        with server.connect(db) as conn:
            # PostgreSQL's default; the test server's synchronous_commit=off would hold each
            # commit back from the walsender for up to wal_writer_delay (200 ms)
            conn.execute("SET synchronous_commit = on")
            next_at = time.perf_counter()
            for start in range(0, total, per_tx):
                first = start % rows + 1
                conn.execute(
                    "UPDATE items SET v = v + 1 WHERE id >= %s AND id < %s",
                    (first, first + per_tx),
                )
                next_at += interval_s
                pause = next_at - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
        done.set()

    writer = threading.Thread(target=write, daemon=True)
    started = time.perf_counter()
    writer.start()
    to_log: list[float] = []
    to_consumer: list[float] = []
    try:
        while len(to_consumer) < total and time.perf_counter() - started < seconds + 60:
            for record in consumer.poll(0.05):
                received_ms = time.time() * 1000
                commit_ms = source_ts_ms(record.value or b"")
                to_log.append(record.timestamp - commit_ms)
                to_consumer.append(received_ms - commit_ms)
    finally:
        writer.join(60)
        consumer.close()
    actual_rate = total / max(1e-9, time.perf_counter() - started)
    return {
        "events": len(to_consumer),
        "offered_events_s": round(min(actual_rate, rate)),
        "record_ms": _percentiles(to_log),
        "consumer_ms": _percentiles(to_consumer),
    }


def source_ts_ms(value: bytes) -> int:
    """``payload.source.ts_ms`` of a JSON change event, without parsing the whole value
    (so the measuring consumer keeps up on a busy machine)."""
    payload = value.index(b'"payload":')
    at = value.index(b'"ts_ms":', value.index(b'"source":', payload)) + 8
    return int(value[at:value.index(b",", at)])


def _percentiles(samples: list[float]) -> dict[str, float]:
    if len(samples) < 2:
        return {}
    cuts = statistics.quantiles(samples, n=100)
    return {"p50": round(cuts[49], 1), "p99": round(cuts[98], 1)}


def run(rows: int, rate: int, seconds: float) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="sluice-bench-cdc-"))
    root.chmod(0o755)  # the server runs as the postgres user when we are root
    server = PostgresServer(root / "cluster").start()
    worker: Worker | None = None
    try:
        db = prepare(server, rows)
        update_all(server, db, rows)
        worker = Worker(root / "worker")
        time.sleep(2)  # let the worker come up before the clock starts
        drained = drain_rate(worker, server, db, rows)
        latency = paced_latency(worker, server, db, rows, rate, seconds)
        worker.stop()
        worker = None
        raw = raw_stream(server, db, rows)
        decoded, decode_cpu_us = decode_in_process(server, db, rows)
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "updates": rows,
        "converter": "JsonConverter (schemas.enable=true)",
        "pipeline_events_s": round(drained["events_s"]),
        "pipeline_s": round(drained["seconds"], 2),
        "latency_offered_events_s": latency["offered_events_s"],
        "latency_events": latency["events"],
        "latency_record_ms": latency["record_ms"],
        "latency_consumer_ms": latency["consumer_ms"],
        "raw_stream_events_s": round(raw),
        "decode_events_s": round(decoded),
        "decode_cpu_us_per_event": round(decode_cpu_us, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k updates, 4 s paced")
    parser.add_argument("--updates", type=int, default=None)
    parser.add_argument("--rate", type=int, default=5000, help="paced events/s")
    args = parser.parse_args()
    rows = args.updates or (20_000 if args.quick else 100_000)
    seconds = 4.0 if args.quick else 10.0
    print(json.dumps(run(rows, args.rate, seconds)))


if __name__ == "__main__":
    main()
