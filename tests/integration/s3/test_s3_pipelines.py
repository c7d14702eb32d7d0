"""S3 pipelines run by ``sluice standalone`` as users run them: a SIGKILL mid-stream, a
backup-and-restore round trip, and bad input (a missing bucket, records the format refuses)."""

from __future__ import annotations

import io
import json
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from harness.s3_server import S3Server
from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from log_engine.client import SyncAdmin, SyncConsumer, SyncProducer, TopicPartition
from tests.integration.s3.objects import object_bytes, object_keys

JSON_VALUES = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topic(topic, partitions, if_not_exists=True)
    with SyncProducer({"bootstrap.servers": bootstrap}) as producer:
        for i in range(per_partition):
            for p in range(partitions):
                value = json.dumps({"p": p, "i": i}).encode()
                producer.send(topic, value, partition=p)
        producer.flush()


def consume(bootstrap: str, topic: str, partitions: int, count: int) -> dict[int, list[bytes]]:
    """Every record of ``topic`` (waiting for ``count``), by partition, in offset order."""
    got: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    with SyncConsumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}"}) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        consumer.seek_to_beginning()

        def more() -> bool:
            for record in consumer.poll(0.5):
                got[record.partition].append(record.value)
            return sum(map(len, got.values())) >= count

        wait_for_rest(more, f"{count} records in {topic}")
    return got


def backup_by_partition(s3: S3Server, bucket: str, topic: str) -> dict[int, list[object]]:
    """The values in S3, by Kafka partition, objects in start-offset order."""
    found: dict[int, list[tuple[int, list[object]]]] = {}
    for key in object_keys(s3, bucket, f"topics/{topic}/"):
        _, partition, start = key.rsplit("/", 1)[-1].split(".")[0].split("+")
        values = [json.loads(line) for line in object_bytes(s3, bucket, key).splitlines()]
        found.setdefault(int(partition), []).append((int(start), values))
    return {p: [v for _, vs in sorted(objs) for v in vs] for p, objs in found.items()}


def s3_sink(name: str, s3: S3Server, bucket: str, topic: str, **extra: str) -> str:
    settings = {
        "name": name,
        "connector.class": "S3Sink",
        "topics": topic,
        **s3.props(bucket),
        **JSON_VALUES,
        **extra,
    }
    return properties(**settings)


@pytest.mark.slow
def test_a_sink_killed_mid_stream_and_restarted_leaves_each_record_once(
    s3: S3Server, bucket: str, fresh_worker: Callable[..., StandaloneProcess]
) -> None:
    # consumer offsets are committed rarely: the restart has to find its place in S3
    worker = fresh_worker(**{"offset.flush.interval.ms": "600000"}).start()
    topic, partitions, per_partition = "events", 2, 300
    produce(worker.bootstrap, topic, partitions, per_partition)
    worker.write_pipeline("backup", s3_sink("backup", s3, bucket, topic, **{"flush.size": "10"}))
    wait_for_rest(lambda: len(object_keys(s3, bucket)) >= 6, "the first objects")
    worker.stop(signal.SIGKILL)
    written_before = len(object_keys(s3, bucket))
    assert written_before < 60, "the sink finished before the kill: nothing was tested"
    worker.start()
    wait_for_rest(lambda: len(object_keys(s3, bucket)) == 60, "all 60 objects", timeout_s=90)
    worker.wait_running("backup")
    backup = backup_by_partition(s3, bucket, topic)
    for p in range(partitions):
        assert backup[p] == [{"p": p, "i": i} for i in range(per_partition)]
    # the restarted task resumed after the objects already in S3: it wrote only the rest
    # (without that, it would have started again from offset 0: the group committed nothing)
    status = worker.status("backup")
    assert status is not None
    assert status["tasks"][0]["details"]["objects_written"] <= 60 - written_before


BLOB_BYTES = 110_000  # ten make an object of over 1 MiB: written by the upload process


def blob(i: int) -> bytes:
    return f"{i:06d}".encode() + b"b" * (BLOB_BYTES - 6)


@pytest.mark.slow
def test_large_objects_from_the_upload_process_stay_exactly_once_across_a_sigkill(
    s3: S3Server, bucket: str, fresh_worker: Callable[..., StandaloneProcess]
) -> None:
    worker = fresh_worker(**{"offset.flush.interval.ms": "600000"}).start()
    topic, count, flush_size = "blobs", 400, 10
    with SyncAdmin({"bootstrap.servers": worker.bootstrap}) as admin:
        admin.create_topic(topic, 1)
    with SyncProducer({"bootstrap.servers": worker.bootstrap}) as producer:
        for i in range(count):
            producer.send(topic, blob(i), partition=0)
        producer.flush()
    byte_values = {
        "format.class": "bytearray",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "flush.size": str(flush_size),
    }
    worker.write_pipeline("blobs", s3_sink("blobs", s3, bucket, topic, **byte_values))
    wait_for_rest(lambda: len(object_keys(s3, bucket)) >= 2, "the first objects")
    worker.stop(signal.SIGKILL)
    written_before = len(object_keys(s3, bucket))
    assert written_before < count // flush_size, "the sink finished before the kill"
    worker.start()
    wait_for_rest(lambda: len(object_keys(s3, bucket)) == count // flush_size, "all the objects")
    keys = object_keys(s3, bucket)  # named by their first offset, zero-padded: in order
    values = [v for key in keys for v in object_bytes(s3, bucket, key).split(b"\n")[:-1]]
    assert values == [blob(i) for i in range(count)]
    status = worker.status("blobs")
    assert status is not None
    assert status["tasks"][0]["details"]["objects_written"] <= count // flush_size - written_before


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    """One worker for the round trip and bad-input pipelines (each uses its own topics)."""
    process = StandaloneProcess(Path(tmp_path_factory.mktemp("s3worker")), flush_interval_ms=500)
    process.start()
    yield process
    process.close()


@pytest.mark.slow
def test_backup_and_restore_keeps_each_partitions_order(
    s3: S3Server, bucket: str, worker: StandaloneProcess
) -> None:
    topic, partitions, per_partition = "orders", 3, 40
    produce(worker.bootstrap, topic, partitions, per_partition)
    worker.write_pipeline(
        "orders-backup", s3_sink("orders-backup", s3, bucket, topic, **{"flush.size": "20"})
    )
    wait_for_rest(lambda: len(object_keys(s3, bucket)) == 6, "6 objects")
    with SyncAdmin({"bootstrap.servers": worker.bootstrap}) as admin:
        admin.create_topic("orders-restored", partitions)
    restore = {
        "name": "orders-restore",
        "connector.class": "io.confluent.connect.s3.source.S3SourceConnector",
        "mode": "RESTORE_BACKUP",
        "restore.topics": topic,
        "s3.poll.interval.ms": "200",
        "record.batch.max.size": "7",
        "transforms": "rename",
        "transforms.rename.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.rename.regex": "orders",
        "transforms.rename.replacement": "orders-restored",
        **s3.props(bucket),
        **JSON_VALUES,
    }
    worker.write_pipeline("orders-restore", properties(**restore))
    restored = consume(worker.bootstrap, "orders-restored", partitions, partitions * per_partition)
    for p in range(partitions):
        assert [json.loads(v) for v in restored[p]] == [{"p": p, "i": i} for i in range(40)]


@pytest.mark.slow
def test_a_missing_bucket_fails_the_task_with_a_clear_trace(
    s3: S3Server, worker: StandaloneProcess
) -> None:
    worker.write_pipeline("nobucket", s3_sink("nobucket", s3, "no-such-bucket", "nobucket-in"))

    def failed_trace() -> str:
        status = worker.status("nobucket")
        tasks = status["tasks"] if status else []
        return tasks[0].get("trace", "") if tasks and tasks[0]["state"] == "FAILED" else ""

    wait_for_rest(failed_trace, "the task to fail")
    assert f"s3.bucket.name: bucket 'no-such-bucket' does not exist at {s3.url}" in failed_trace()


@pytest.mark.slow
def test_records_the_format_refuses_go_to_the_dead_letter_queue(
    s3: S3Server, bucket: str, worker: StandaloneProcess
) -> None:
    topic, refused = "mixed", json.dumps("plain text, not an object").encode()
    with SyncAdmin({"bootstrap.servers": worker.bootstrap}) as admin:
        admin.create_topic(topic, 1)
    with SyncProducer({"bootstrap.servers": worker.bootstrap}) as producer:
        for i in range(6):  # JSON all, but Parquet rows must be objects: 1 and 4 are refused
            producer.send(topic, refused if i % 3 == 1 else json.dumps({"i": i}).encode())
        producer.flush()
    sink = s3_sink(
        "mixed-parquet",
        s3,
        bucket,
        topic,
        **{
            "format.class": "ParquetFormat",
            "flush.size": "4",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": "mixed-dlq",
        },
    )
    worker.write_pipeline("mixed-parquet", sink)
    assert consume(worker.bootstrap, "mixed-dlq", 1, 2)[0] == [refused, refused]
    key = f"topics/{topic}/partition=0/{topic}+0+0000000000.snappy.parquet"
    wait_for_rest(lambda: object_keys(s3, bucket) == [key], "the Parquet object")
    rows = pq.read_table(io.BytesIO(object_bytes(s3, bucket, key))).to_pylist()
    assert rows == [{"i": 0}, {"i": 2}, {"i": 3}, {"i": 5}]
    assert worker.running("mixed-parquet")


@pytest.mark.slow
def test_a_refused_record_without_tolerance_fails_the_task_naming_it(
    s3: S3Server, bucket: str, worker: StandaloneProcess
) -> None:
    topic = "raw-bytes"
    with SyncAdmin({"bootstrap.servers": worker.bootstrap}) as admin:
        admin.create_topic(topic, 1)
    with SyncProducer({"bootstrap.servers": worker.bootstrap}) as producer:
        producer.send(topic, b"\x00\x01binary", partition=0)
        producer.flush()
    sink = s3_sink(
        "raw-json",
        s3,
        bucket,
        topic,
        **{"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"},
    )
    worker.write_pipeline("raw-json", sink)

    def failed_trace() -> str:
        status = worker.status("raw-json")
        tasks = status["tasks"] if status else []
        return tasks[0].get("trace", "") if tasks and tasks[0]["state"] == "FAILED" else ""

    wait_for_rest(failed_trace, "the task to fail")
    assert "record raw-bytes-0@0: the value is raw bytes" in failed_trace()
    assert "format.class=bytearray" in failed_trace()  # the way out is named
    assert object_keys(s3, bucket) == []
    with SyncAdmin({"bootstrap.servers": worker.bootstrap}) as admin:  # nothing skipped
        committed = admin.list_consumer_group_offsets("connect-raw-json")
    assert all(o.offset == 0 for o in committed.values())
