"""Every part of a standalone worker uses the worker's own cluster (issue 14, item 1).

A real ``sluice standalone`` runs its embedded broker on a random port while a
second real broker listens on 9092, the old default address, holding a topic
of the same name with other records. A SparkSink configured without
``spark.bootstrap.servers`` must read the embedded broker (its task is told
the worker's bootstrap servers), and a sink's dead-letter queue must be
written there too; the broker on 9092 must see neither.

Port 9092 must be free on the machine: a test that cannot put a broker there
cannot show anything, so it fails saying so (it does not skip).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from log_engine.client import SyncAdmin, SyncConsumer, SyncProducer, TopicPartition

pytestmark = pytest.mark.slow

OLD_DEFAULT_PORT = 9092
TOPIC = "orders"
RECORDS = 50


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def decoy(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A second real broker on 127.0.0.1:9092 holding ``orders`` with decoy records."""
    if not _port_is_free(OLD_DEFAULT_PORT):
        pytest.fail(
            f"127.0.0.1:{OLD_DEFAULT_PORT} is in use: this test needs that port free to run "
            "a second broker there (stop whatever listens on it and run the test again)"
        )
    broker = BrokerProcess(tmp_path / "decoy", port=OLD_DEFAULT_PORT).start()
    try:
        _fill(broker.bootstrap, [{"id": -1 - i, "source": "decoy"} for i in range(RECORDS)])
        yield broker
    finally:
        broker.stop()


def _fill(bootstrap: str, values: list[dict[str, object]], topic: str = TOPIC) -> None:
    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topic(topic, 1)
    with SyncProducer({"bootstrap.servers": bootstrap, "acks": "all"}) as producer:
        futures = [producer.send(topic, json.dumps(v).encode()) for v in values]
        producer.flush()
        for future in futures:
            future.result(timeout=30)


def _topics(bootstrap: str) -> set[str]:
    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        return set(admin.list_topics())


def _groups(bootstrap: str) -> list[object]:
    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        return list(admin.list_groups())


def _end_offset(bootstrap: str, topic: str) -> int:
    with SyncConsumer({"bootstrap.servers": bootstrap}) as consumer:
        return consumer.end_offsets([TopicPartition(topic, 0)])[TopicPartition(topic, 0)]


def test_spark_sink_reads_the_workers_embedded_broker_not_9092(
    spark, decoy: BrokerProcess, fresh_worker: Callable[..., StandaloneProcess], tmp_path: Path
) -> None:
    worker = fresh_worker().start()
    assert worker.broker_port != OLD_DEFAULT_PORT
    _fill(worker.bootstrap, [{"id": i, "source": "embedded"} for i in range(RECORDS)])
    out = tmp_path / "out"
    worker.write_pipeline(
        "spark-orders",
        properties(
            name="spark-orders",
            connector_class="SparkSink",
            topics=TOPIC,
            spark_master="local[1]",
            checkpoint_location=str(tmp_path / "checkpoint"),
            output_path=str(out),
            output_format="json",
            trigger_interval_ms=100,
            value_schema="id INT, source STRING",
        ),
    )

    def rows() -> list[dict[str, object]]:
        files = sorted(out.glob("part-*.json")) if out.exists() else []
        return [json.loads(line) for f in files for line in f.read_text().splitlines()]

    wait_for_rest(
        lambda: len(rows()) >= RECORDS,
        f"{RECORDS} rows in {out} (status: {worker.status('spark-orders')}; rows so far: "
        f"{rows()[:3]})",
        120,
    )
    assert sorted(r["id"] for r in rows()) == list(range(RECORDS))
    assert {r["source"] for r in rows()} == {"embedded"}
    status = worker.status("spark-orders")
    assert status is not None and status["tasks"][0]["state"] == "RUNNING", status
    assert _topics(decoy.bootstrap) == {TOPIC}
    assert _end_offset(decoy.bootstrap, TOPIC) == RECORDS
    assert _groups(decoy.bootstrap) == []


def test_a_dead_letter_queue_goes_to_the_workers_embedded_broker_not_9092(
    decoy: BrokerProcess, fresh_worker: Callable[..., StandaloneProcess], tmp_path: Path
) -> None:
    worker = fresh_worker().start()
    with SyncAdmin({"bootstrap.servers": worker.bootstrap}) as admin:
        admin.create_topic("raw", 1)
    with SyncProducer({"bootstrap.servers": worker.bootstrap, "acks": "all"}) as producer:
        for value in (b'{"ok": 1}', b"not json", b'{"ok": 2}'):
            producer.send("raw", value).result(timeout=30)
    sunk = tmp_path / "sunk.txt"
    worker.write_pipeline(
        "dlq-sink",
        properties(
            name="dlq-sink",
            connector_class="FileStreamSink",
            file=str(sunk),
            topics="raw",
            value_converter="org.apache.kafka.connect.json.JsonConverter",
            value_converter_schemas_enable="false",
            errors_tolerance="all",
            errors_deadletterqueue_topic_name="raw-dlq",
            errors_deadletterqueue_topic_replication_factor=1,
        ),
    )
    wait_for_rest(
        lambda: "raw-dlq" in _topics(worker.bootstrap) and _end_offset(worker.bootstrap, "raw-dlq"),
        f"the bad record in raw-dlq on the embedded broker (status: {worker.status('dlq-sink')})",
    )
    assert _end_offset(worker.bootstrap, "raw-dlq") == 1
    assert _topics(decoy.bootstrap) == {TOPIC}
    assert _groups(decoy.bootstrap) == []
