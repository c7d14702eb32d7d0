"""JDBC pipeline end to end: PostgreSQL -> JdbcSource -> log -> JdbcSink -> PostgreSQL.

Fills a table of N rows (bigint key, text, numeric(12,2), timestamptz, boolean)
in a PostgreSQL of its own, starts a subprocess broker and an in-process
worker (StandaloneHerder) running a JdbcSource (mode incrementing) and a
JdbcSink (insert: COPY) into a second database, and times until the target
holds every row. In the same run it measures the baseline: ``COPY src TO
STDOUT`` piped into ``COPY dst FROM STDIN`` of the same table (what the
database itself can move). It also times each half alone (source to the log;
log to the sink) to tell where the time goes, as microseconds per row, and the
value converter alone on the same rows (its share of each half).

``worker_cpu_us_per_row``: the in-process worker's CPU time (all its threads,
user + system) over the end-to-end run, per row: a figure the machine's noise
moves much less than the rates. ``broker_cpu_us_per_row`` is the broker
process's, ``machine_cpu_us_per_row`` every process's (worker, broker,
PostgreSQL, anything else running): at 2 cores, the rate can not pass
2 s / that figure.

``two_workers_rows_s``: the same pipeline split over two ``sluice
standalone`` processes on the same broker, the source in one and the sink in
the other (how a deployment gets past one interpreter's lock: each worker's
threads share one GIL).

``log_only_rows_s`` is the ceiling the log itself puts on any pipeline of
these records: the source half's topic read to its end by a plain consumer of
our client, each batch's values produced into a new topic with ``send_many``
(the worker's producer settings) and flushed: bytes in, bytes out, no
connector, no converter, no database.

Prints one JSON line. ``--quick`` moves 200k rows instead of 1M.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from connect_worker.cli.standalone import freeze_startup_objects
from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.worker_config import WorkerConfig
from harness.broker_process import BrokerProcess
from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess, properties

TABLE = """
CREATE TABLE orders (
  id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(12,2) NOT NULL,
  placed_at timestamptz NOT NULL, paid boolean NOT NULL
)
"""
FILL = """
INSERT INTO orders
SELECT g, 'customer ' || (g %% 10000), (g %% 100000) / 100.0,
       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', g %% 3 = 0
FROM generate_series(1, %s::bigint) g
"""
TIMEOUT_S = 1200.0
CONVERTERS = {
    "key.converter": "JsonConverter",
    "value.converter": "JsonConverter",
    "value.converter.schemas.enable": "true",
}


def copy_baseline(server: PostgresServer, src: str, count: int) -> float:
    """Seconds for COPY TO + COPY FROM of the table between the two databases."""
    target = server.create_database("copy")
    with server.connect(target) as conn:
        conn.execute(TABLE)
    started = time.perf_counter()
    with (
        server.connect(src) as reader,
        server.connect(target) as writer,
        reader.cursor().copy("COPY orders TO STDOUT") as out,
        writer.cursor().copy("COPY orders FROM STDIN") as into,
    ):
        for chunk in out:
            into.write(chunk)
    elapsed = time.perf_counter() - started
    with server.connect(target) as conn:
        assert conn.execute("SELECT count(*) FROM orders").fetchone() == (count,)
    return elapsed


_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * _TICK_S


def machine_busy_s() -> float:
    """CPU seconds all processes of the machine have used so far (every core)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) * _TICK_S


def count_rows(server: PostgresServer, db: str) -> int:
    with server.connect(db) as conn:
        try:
            row = conn.execute("SELECT count(*) FROM orders").fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
    return int(row[0]) if row else 0


def make_herder(workdir: Path, broker: BrokerProcess, name: str) -> StandaloneHerder:
    props = {
        "offset.storage.file.filename": str(workdir / f"{name}.offsets"),
        "connector.configs.file": str(workdir / f"{name}.json"),
        "offset.flush.interval.ms": "5000",
        **CONVERTERS,
    }
    herder = StandaloneHerder(
        WorkerConfig.from_properties(props), PluginRegistry.load(entry_points=False),
        bootstrap=broker.bootstrap,
    )
    herder.start()
    freeze_startup_objects()  # the GC settings `sluice standalone` runs with
    return herder


def source_config(server: PostgresServer, db: str, topic_prefix: str) -> dict[str, str]:
    return {
        "connector.class": "JdbcSource",
        "connection.url": server.url(db),
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "topic.prefix": topic_prefix,
        "poll.interval.ms": "1000",
        "batch.max.rows": "5000",
    }


def sink_config(server: PostgresServer, db: str, topic: str) -> dict[str, str]:
    return {
        "connector.class": "JdbcSink",
        "connection.url": server.url(db),
        "topics": topic,
        "table.name.format": "orders",
        "auto.create": "true",
        "batch.size": "5000",
    }


def wait_until(check: Any, what: str) -> None:
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > TIMEOUT_S:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.25)


def topic_end(broker: BrokerProcess, topic: str) -> int:
    from log_engine.client import SyncConsumer, TopicPartition

    consumer = SyncConsumer({"bootstrap.servers": broker.bootstrap})
    try:
        tp = TopicPartition(topic, 0)
        return consumer.end_offsets([tp]).get(tp, 0)
    finally:
        consumer.close()


def log_only(broker: BrokerProcess, topic: str, count: int) -> float:
    """Seconds to copy ``topic``'s first ``count`` records into a new topic, bytes only."""
    from connect_worker.runtime.task_factory import PRODUCER_DEFAULTS
    from log_engine.client import SyncConsumer, SyncProducer, TopicPartition

    consumer = SyncConsumer({
        "bootstrap.servers": broker.bootstrap, "max.poll.records": "5000",
        "enable.auto.commit": "false",
    })
    producer = SyncProducer({"bootstrap.servers": broker.bootstrap, **PRODUCER_DEFAULTS})
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        copied = 0
        started = time.perf_counter()
        while copied < count:
            records = consumer.poll(1.0)
            if records:
                result = producer.send_many(
                    "log-only-" + topic, [r.value for r in records], [r.key for r in records]
                )
                assert result.error is None, result.error
                copied += len(records)
        producer.flush()
        return time.perf_counter() - started
    finally:
        consumer.close()
        producer.close()


def pipeline(workdir: Path, server: PostgresServer, broker: BrokerProcess, src: str,
             count: int) -> dict[str, float]:
    """End to end, then each half alone (source into a topic; a sink reading it again)."""
    dst = server.create_database("dst")
    herder = make_herder(workdir, broker, "e2e")
    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        assert broker.process is not None
        broker_started, machine_started = process_cpu_s(broker.process.pid), machine_busy_s()
        herder.put_connector_config("sink", sink_config(server, dst, "e2e-orders"),
                                    allow_replace=False)
        herder.put_connector_config("source", source_config(server, src, "e2e-"),
                                    allow_replace=False)
        wait_until(lambda: count_rows(server, dst) >= count, "the end-to-end rows")
        end_to_end = time.perf_counter() - started
        worker_cpu = time.process_time() - cpu_started
        broker_cpu = process_cpu_s(broker.process.pid) - broker_started
        machine_cpu = machine_busy_s() - machine_started
    finally:
        herder.stop()
    # The halves: the source alone into a fresh topic, then a sink alone from that topic.
    herder = make_herder(workdir, broker, "halves")
    try:
        started = time.perf_counter()
        herder.put_connector_config("source2", source_config(server, src, "half-"),
                                    allow_replace=False)
        wait_until(lambda: topic_end(broker, "half-orders") >= count, "the source half")
        source_s = time.perf_counter() - started
        herder.delete_connector("source2")
        dst2 = server.create_database("dst")
        started = time.perf_counter()
        herder.put_connector_config("sink2", sink_config(server, dst2, "half-orders"),
                                    allow_replace=False)
        wait_until(lambda: count_rows(server, dst2) >= count, "the sink half")
        sink_s = time.perf_counter() - started
    finally:
        herder.stop()
    log_s = log_only(broker, "half-orders", count)
    return {"end_to_end_s": end_to_end, "worker_cpu_s": worker_cpu, "broker_cpu_s": broker_cpu,
            "machine_cpu_s": machine_cpu, "source_s": source_s,
            "sink_s": sink_s, "log_s": log_s}


def two_workers(workdir: Path, server: PostgresServer, broker: BrokerProcess, src: str,
                count: int) -> float:
    """Seconds end to end with the source and the sink in two ``sluice standalone`` processes."""
    dst = server.create_database("dst")
    settings: dict[str, Any] = {"bootstrap.servers": broker.bootstrap, **CONVERTERS}
    workers = [
        StandaloneProcess(workdir / name, flush_interval_ms=5000, **settings)
        for name in ("source-worker", "sink-worker")
    ]
    try:
        for worker in workers:
            worker.start()
        started = time.perf_counter()
        workers[1].write_pipeline("sink", properties(
            name="sink", **sink_config(server, dst, "two-orders")))
        workers[0].write_pipeline("source", properties(
            name="source", **source_config(server, src, "two-")))
        wait_until(lambda: count_rows(server, dst) >= count, "the two workers' rows")
        return time.perf_counter() - started
    finally:
        for worker in workers:
            worker.close()


def converter_cost(server: PostgresServer, src: str, sample: int) -> dict[str, float]:
    """µs per row of the value converter alone, each way, on rows the JdbcSource reads."""
    from connect_worker.converters.json import JsonConverter
    from connectors.jdbc.config import JdbcSourceConfig
    from connectors.jdbc.dialect import TableId, dialect_for
    from connectors.jdbc.querier import Querier
    from connectors.jdbc.url import parse_url

    config = JdbcSourceConfig.from_props({
        "connection.url": server.url(src), "mode": "bulk", "batch.max.rows": str(sample),
    })
    dialect = dialect_for(parse_url(config.connection_url))
    conn = dialect.connect()
    try:
        querier = Querier(dialect, config, table=TableId(None, "orders"))
        querier.open(conn)
        records = querier.fetch()
        querier.close()
    finally:
        conn.close()
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"})
    started = time.perf_counter()
    data = [converter.from_connect("t", r.value_schema, r.value) for r in records]
    encode_s = time.perf_counter() - started
    started = time.perf_counter()
    for item in data:
        converter.to_connect("t", item)
    decode_s = time.perf_counter() - started
    return {
        "json_from_connect_us_per_row": round(encode_s / len(records) * 1e6, 2),
        "json_to_connect_us_per_row": round(decode_s / len(records) * 1e6, 2),
    }


def run(count: int) -> dict[str, Any]:
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="sluice-bench-jdbc-") as tmp:
        workdir = Path(tmp)
        workdir.chmod(0o755)
        server = PostgresServer(workdir / "pg").start()
        broker = BrokerProcess(workdir / "broker").start()
        try:
            src = server.create_database("src")
            with server.connect(src) as conn:
                conn.execute(TABLE)
                conn.execute(FILL, (count,))
                conn.execute("VACUUM ANALYZE orders")
            copy_s = copy_baseline(server, src, count)
            result = pipeline(workdir, server, broker, src, count)
            two_s = two_workers(workdir, server, broker, src, count)
            converters = converter_cost(server, src, min(count, 50_000))
        finally:
            broker.stop()
            server.stop()
    e2e_rate = count / result["end_to_end_s"]
    copy_rate = count / copy_s
    return {
        "rows": count,
        "end_to_end_rows_s": round(e2e_rate),
        "end_to_end_s": round(result["end_to_end_s"], 2),
        "worker_cpu_us_per_row": round(result["worker_cpu_s"] / count * 1e6, 2),
        "broker_cpu_us_per_row": round(result["broker_cpu_s"] / count * 1e6, 2),
        "machine_cpu_us_per_row": round(result["machine_cpu_s"] / count * 1e6, 2),
        "copy_baseline_rows_s": round(copy_rate),
        "ratio": round(e2e_rate / copy_rate, 3),
        "goal_ratio": 0.3,
        "two_workers_rows_s": round(count / two_s),
        "two_workers_ratio": round(count / two_s / copy_rate, 3),
        "log_only_rows_s": round(count / result["log_s"]),
        "log_only_ratio": round(count / result["log_s"] / copy_rate, 3),
        "source_us_per_row": round(result["source_s"] / count * 1e6, 2),
        "sink_us_per_row": round(result["sink_s"] / count * 1e6, 2),
        "converters": "JsonConverter schemas.enable=true",
        **converters,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200k rows instead of 1M")
    parser.add_argument("--rows", type=int, default=None)
    args = parser.parse_args()
    count = args.rows or (200_000 if args.quick else 1_000_000)
    print(json.dumps(run(count)))


if __name__ == "__main__":
    main()
