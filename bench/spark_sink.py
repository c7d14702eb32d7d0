"""SparkSink: JSON records from the log to Parquet through the connector.

Fills a topic (4 partitions) of a fresh broker with N JSON records of ~200
bytes, then, in the same run:

- ``connector_records_s``: a SparkSink connector (in-process worker,
  ``trigger.available.now``, ``value.schema`` given) writing them to Parquet,
  timed from the connector's creation until its query finished, on an already
  started Spark session; a second connector (own checkpoint and output) on the
  same records, as the peer figure is warm (``connector_first_records_s`` is
  the first one's); ``session_start_s`` (the JVM) and ``first_read_warmup_s``
  (a first tiny read, which starts Spark's Python workers) are reported on their own;
- ``consumer_pyarrow_records_s``: the baseline: a plain ``log_engine.client``
  consumer reading the same records, ``pyarrow.json`` parsing the values and
  ``pyarrow.parquet`` writing them (one Python process, no Spark);
- ``spark_json_files_records_s``: a peer figure: Spark (same session, warm)
  reading the same values from JSON-lines files and writing Parquet.

``ratio`` = connector / baseline (goal >= 0.5). Prints one JSON line;
``--quick`` uses 200k records instead of 2M.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

SCHEMA = (
    "id BIGINT, name STRING, email STRING, city STRING, score DOUBLE, active BOOLEAN, note STRING"
)
PARTITIONS = 4
_TIMEOUT_S = 900.0


def record(i: int) -> bytes:
    return json.dumps(
        {
            "id": i,
            "name": f"user-{i:08d}",
            "email": f"user{i:08d}@example.com",
            "city": ("Lisbon", "Oslo", "Quito", "Perth")[i % 4],
            "score": i % 1000 / 10,
            "active": i % 3 == 0,
            "note": "n" * 70,
        }
    ).encode()


def fill(bootstrap: str, topic: str, count: int) -> int:
    from log_engine.client import SyncAdmin, SyncProducer

    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topic(topic, PARTITIONS)
    size = 0
    with SyncProducer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 262144}
    ) as producer:
        for i in range(count):
            value = record(i)
            size += len(value)
            producer.send(topic, value, partition=i % PARTITIONS)
        producer.flush(300)
    return size


def warm_up(spark: Any, bootstrap: str, topic: str) -> float:
    """A first tiny read: Spark starts its Python workers (reused by later queries)."""
    started = time.perf_counter()
    ending = json.dumps({topic: {str(p): 1 for p in range(PARTITIONS)}})
    reader = spark.read.format("sluice").option("bootstrap.servers", bootstrap)
    reader.option("subscribe", topic).option("endingOffsets", ending).load().count()
    return time.perf_counter() - started


def connector_run(workdir: Path, bootstrap: str, topic: str, name: str) -> float:
    from connect_worker.herder.standalone import StandaloneHerder
    from connect_worker.plugins import PluginRegistry
    from connect_worker.worker_config import WorkerConfig

    herder = StandaloneHerder(
        WorkerConfig.from_properties(
            {
                "offset.storage.file.filename": str(workdir / f"{name}-offsets"),
                "connector.configs.file": str(workdir / f"{name}-connectors.json"),
            }
        ),
        PluginRegistry.load(entry_points=False),
        bootstrap=bootstrap,
    )
    herder.start()
    try:
        started = time.perf_counter()
        herder.put_connector_config(
            name,
            {
                "connector.class": "SparkSink",
                "topics": topic,
                "spark.bootstrap.servers": bootstrap,
                "value.schema": SCHEMA,
                "spark.sql": "SELECT id, name, email, city, score, active, note FROM records",
                "output.path": str(workdir / f"{name}-out"),
                "checkpoint.location": str(workdir / f"{name}-checkpoint"),
                "trigger.available.now": "true",
            },
            allow_replace=False,
        )
        while True:
            tasks = herder.connector_status(name).tasks
            if tasks and tasks[0].trace:
                raise RuntimeError(f"SparkSink failed:\n{tasks[0].trace}")
            if tasks and tasks[0].details.get("query") == "FINISHED":
                return time.perf_counter() - started
            if time.perf_counter() - started > _TIMEOUT_S:
                raise RuntimeError("SparkSink did not finish in time")
            time.sleep(0.1)
    finally:
        herder.stop()


def consumer_pyarrow(workdir: Path, bootstrap: str, topic: str, count: int) -> float:
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    from log_engine.client import SyncConsumer, TopicPartition

    started = time.perf_counter()
    consumer = SyncConsumer(
        {
            "bootstrap.servers": bootstrap,
            "max.poll.records": "20000",
            "max.partition.fetch.bytes": str(16 << 20),
            "fetch.max.bytes": str(64 << 20),
        }
    )
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    for tp in tps:
        consumer.seek(tp, 0)
    out = workdir / "baseline.parquet"
    writer = None
    received = 0
    while received < count:
        records = consumer.poll(1.0)
        if not records:
            continue
        received += len(records)
        table = pj.read_json(io.BytesIO(b"\n".join(r.value or b"" for r in records)))
        if writer is None:
            writer = pq.ParquetWriter(out, table.schema)
        writer.write_table(table)
        if time.perf_counter() - started > _TIMEOUT_S:
            raise RuntimeError(f"baseline consumer read {received}/{count}")
    assert writer is not None
    writer.close()
    consumer.close()
    return time.perf_counter() - started


def spark_json_files(spark: Any, workdir: Path, count: int) -> float:
    source = workdir / "json-in"
    source.mkdir()
    for part in range(PARTITIONS):
        with open(source / f"part-{part}.json", "wb") as out:
            out.write(b"\n".join(record(i) for i in range(part, count, PARTITIONS)) + b"\n")
    best = float("inf")
    for attempt in range(2):  # the first run warms the JVM up; the second is reported
        started = time.perf_counter()
        frame = spark.read.schema(SCHEMA).json(str(source))
        frame.write.mode("overwrite").parquet(str(workdir / f"json-out-{attempt}"))
        best = min(best, time.perf_counter() - started)
    return best


def run(count: int) -> dict[str, Any]:
    from harness.broker_process import BrokerProcess
    from spark_sinks.session import SharedSession

    with tempfile.TemporaryDirectory(prefix="sluice-spark-bench-") as tmp:
        workdir = Path(tmp)
        broker = BrokerProcess(workdir / "broker").start()
        try:
            size = fill(broker.bootstrap, "bench", count)
            spark = SharedSession.acquire("local[*]", {"spark.ui.enabled": "false"})
            session_s = SharedSession.start_s
            warmup_s = warm_up(spark, broker.bootstrap, "bench")
            try:
                connector_s = []
                for name in ("first", "second"):  # a first query warms the JVM (JIT) up
                    connector_s.append(connector_run(workdir, broker.bootstrap, "bench", name))
                    rows = spark.read.parquet(str(workdir / f"{name}-out")).count()
                    if rows != count:
                        raise RuntimeError(f"the connector wrote {rows} rows, not {count}")
                baseline_s = consumer_pyarrow(workdir, broker.bootstrap, "bench", count)
                json_s = spark_json_files(spark, workdir, count)
            finally:
                SharedSession.release()
        finally:
            broker.stop()
    return {
        "records": count,
        "record_bytes": round(size / count),
        "session_start_s": round(session_s, 1),
        "first_read_warmup_s": round(warmup_s, 1),
        "connector_first_records_s": round(count / connector_s[0]),
        "connector_records_s": round(count / connector_s[1]),
        "connector_s": round(connector_s[1], 2),
        "consumer_pyarrow_records_s": round(count / baseline_s),
        "ratio": round(baseline_s / connector_s[1], 2),
        "spark_json_files_records_s": round(count / json_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200k records instead of 2M")
    parser.add_argument("--records", type=int, default=None)
    args = parser.parse_args()
    count = args.records or (200_000 if args.quick else 2_000_000)
    print(json.dumps(run(count)))


if __name__ == "__main__":
    main()
