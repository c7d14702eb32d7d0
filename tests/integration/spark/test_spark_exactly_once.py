"""SparkSink in a real ``sluice standalone``: SIGKILL mid-query, restart, exact Parquet output."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from log_engine.client import SyncAdmin, SyncProducer

pytestmark = pytest.mark.slow

RECORDS = 1200
PER_BATCH = 200


def _fill(bootstrap: str, topic: str) -> None:
    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topic(topic, 2)
    with SyncProducer({"bootstrap.servers": bootstrap, "acks": "all"}) as producer:
        for i in range(RECORDS):
            producer.send(topic, b'{"id": %d, "pad": "%s"}' % (i, b"x" * 100), partition=i % 2)
        producer.flush()


def _committed_batches(out: Path) -> int:
    """Micro-batches in the file sink's log (``N`` or ``N.compact`` per batch id N)."""
    log = out / "_spark_metadata"
    names = [p.name.split(".")[0] for p in log.iterdir()] if log.exists() else []
    ids = [int(name) for name in names if name.isdigit()]
    return max(ids) + 1 if ids else 0


def test_sigkill_mid_query_then_restart_writes_every_record_exactly_once(
    spark, fresh_worker: Callable[..., StandaloneProcess], tmp_path: Path
) -> None:
    worker = fresh_worker().start()
    topic = "spark-eos"
    _fill(worker.bootstrap, topic)
    out = tmp_path / "out"
    worker.write_pipeline(
        "spark-eos",
        properties(
            name="spark-eos",
            connector_class="SparkSink",
            topics=topic,
            spark_bootstrap_servers=worker.bootstrap,
            spark_master="local[1]",
            checkpoint_location=str(tmp_path / "checkpoint"),
            output_path=str(out),
            trigger_interval_ms=100,
            max_offsets_per_trigger=PER_BATCH,
            value_schema="id INT, pad STRING",
        )
        + "spark.sql=SELECT id, _partition AS p, _offset AS o FROM records\n",
    )
    wait_for_rest(lambda: _committed_batches(out) >= 2, "two committed micro-batches", 120)
    assert worker.stop(signal.SIGKILL) == -signal.SIGKILL
    assert _committed_batches(out) < RECORDS // PER_BATCH, "killed too late to test anything"

    worker.start()
    wait_for_rest(
        lambda: _committed_batches(out) >= RECORDS // PER_BATCH, "the rest of the records", 180
    )
    rows = spark.read.parquet(str(out)).collect()
    assert len(rows) == RECORDS  # none twice
    assert sorted(r.id for r in rows) == list(range(RECORDS))  # none missing
    assert all(r.p == r.id % 2 and r.o == r.id // 2 for r in rows)
    status = worker.status("spark-eos")
    assert status is not None and status["tasks"][0]["state"] == "RUNNING", status
