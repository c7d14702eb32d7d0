"""The S3 sink task against a real S3 endpoint (moto_server): formats, partitioners, rotation,
multipart, nulls, bad records, and where a restarted task resumes."""

from __future__ import annotations

import datetime as dt
import io
import json
import time
from collections.abc import Callable, Iterator

import pyarrow.parquet as pq
import pytest

from connectors.api import DataError, RetriableError, SinkRecord, TopicPartition
from connectors.s3.naming import object_key
from connectors.s3.sink import S3SinkTask
from harness.s3_server import S3Server
from tests.integration.s3.objects import object_bytes, object_keys, object_metadata
from tests.integration.s3.tcp_proxy import TcpProxy
from tests.support.plugin_harness import SinkContext

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)
MiB = 1024 * 1024
MakeTask = Callable[..., tuple[S3SinkTask, SinkContext]]


def rec(value: object, offset: int, partition: int = 0, ts: int | None = None) -> SinkRecord:
    return SinkRecord(
        topic="t", partition=partition, kafka_offset=offset, value=value, timestamp=ts
    )


@pytest.fixture
def make_task(s3: S3Server, bucket: str) -> Iterator[MakeTask]:
    tasks: list[S3SinkTask] = []

    def make(*partitions: TopicPartition, **props: str) -> tuple[S3SinkTask, SinkContext]:
        task, context = S3SinkTask(), SinkContext(set(partitions))
        task.initialize(context)
        task.start({**s3.props(bucket), "topics": "t", **props})
        task.open(list(partitions))
        tasks.append(task)
        return task, context

    yield make
    for task in tasks:
        task.stop()


def put(task: S3SinkTask, records: list[SinkRecord]) -> None:
    """``put``, then wait for the background upload of the batches it closed."""
    task.put(records)
    task.flush({})


def lines(s3: S3Server, bucket: str, key: str) -> list[object]:
    return [json.loads(line) for line in object_bytes(s3, bucket, key).splitlines()]


def test_json_objects_are_cut_by_flush_size_and_a_new_task_resumes_after_them(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    task, context = make_task(TP0, TP1, **{"flush.size": "3"})
    assert context.rewinds == {}  # nothing in S3 yet: the group's offsets apply
    assert task.details()["first_object_at"] is None
    before = time.time()
    put(task, [rec({"n": i}, i) for i in range(7)] + [rec({"m": i}, i, 1) for i in range(3)])
    details = task.details()
    assert details["objects_written"] == 3
    assert before <= details["first_object_at"] <= details["last_object_at"] <= time.time()
    assert object_keys(s3, bucket) == [
        "topics/t/partition=0/t+0+0000000000.json",
        "topics/t/partition=0/t+0+0000000003.json",
        "topics/t/partition=1/t+1+0000000000.json",
    ]
    assert lines(s3, bucket, "topics/t/partition=0/t+0+0000000003.json") == [
        {"n": 3},
        {"n": 4},
        {"n": 5},
    ]
    # only what is in S3 may be committed; record 6 is still buffered
    assert task.pre_commit({TP0: 7, TP1: 3}) == {TP0: 6, TP1: 3}
    assert task.details()["partitions"]["t-0"] == {"committed_offset": 6, "buffered_records": 1}
    task.stop()
    _, again = make_task(TP0, TP1, **{"flush.size": "3"})
    assert again.rewinds == {TP0: 6, TP1: 3}


def test_a_batch_cut_short_by_a_crash_is_not_counted_and_is_rewritten_whole(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    props = {
        "flush.size": "4",
        "partitioner.class": "FieldPartitioner",
        "partition.field.name": "c",
    }
    task, _ = make_task(TP0, **props)
    put(task, [rec({"c": c, "i": i}, i) for i, c in enumerate("abab")])
    task.stop()
    # what a task dying while writing the batch [4, 8) leaves: an object of it, not its head
    orphan = object_key("topics", "t", "c=b", 0, 5, "json")
    s3.client().put_object(
        Bucket=bucket,
        Key=orphan,
        Body=b'{"c": "b", "i": 5}\n',
        Metadata={"sluice-batch-start": "4", "sluice-batch-end": "8"},
    )
    task, context = make_task(TP0, **props)
    assert context.rewinds == {TP0: 4}
    put(task, [rec({"c": c, "i": i}, i) for i, c in zip(range(4, 8), "abab", strict=True)])
    assert lines(s3, bucket, orphan) == [{"c": "b", "i": 5}, {"c": "b", "i": 7}]
    everything = [v for key in object_keys(s3, bucket) for v in lines(s3, bucket, key)]
    assert sorted(v["i"] for v in everything) == list(range(8))  # type: ignore[index]


def test_bytearray_objects_hold_the_raw_values(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    task, _ = make_task(TP0, **{"flush.size": "2", "format.class": "bytearray"})
    put(task, [rec(b"\x00\xffone", 0), rec(b"two", 1)])
    key = "topics/t/partition=0/t+0+0000000000.bin"
    assert object_keys(s3, bucket) == [key]
    assert object_bytes(s3, bucket, key) == b"\x00\xffone\ntwo\n"


def test_parquet_objects_read_back_with_pyarrow(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    format_class = "io.confluent.connect.s3.format.parquet.ParquetFormat"
    task, _ = make_task(TP0, **{"flush.size": "3", "format.class": format_class})
    rows = [{"id": i, "name": f"n{i}", "score": i / 2} for i in range(3)]
    put(task, [rec(row, i) for i, row in enumerate(rows)])
    key = "topics/t/partition=0/t+0+0000000000.snappy.parquet"
    assert object_keys(s3, bucket) == [key]
    table = pq.read_table(io.BytesIO(object_bytes(s3, bucket, key)))
    assert table.to_pylist() == rows
    assert table.schema.names == ["id", "name", "score"]


def test_field_and_time_based_partitioners_shape_the_keys(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    at = int(dt.datetime(2024, 3, 7, 9, 30, tzinfo=dt.UTC).timestamp() * 1000)
    task, _ = make_task(
        TP0,
        **{
            "flush.size": "2",
            "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
            "partition.duration.ms": "3600000",
            "timestamp.extractor": "Record",
            "timezone": "UTC",
            "locale": "en-US",
            "topics.dir": "backup/",
        },
    )
    put(task, [rec({"n": 0}, 0, ts=at), rec({"n": 1}, 1, ts=at + 60_000)])
    assert object_keys(s3, bucket) == [
        "backup/t/year=2024/month=03/day=07/hour=09/t+0+0000000000.json"
    ]
    other = s3.new_bucket()
    field_task = S3SinkTask()
    field_task.initialize(SinkContext({TP0}))
    field_task.start(
        {
            **s3.props(other),
            "flush.size": "3",
            "partitioner.class": "FieldPartitioner",
            "partition.field.name": "country",
        }
    )
    field_task.open([TP0])
    put(field_task, [rec({"country": c}, i) for i, c in enumerate(["fr", "de", "fr"])])
    assert object_keys(s3, other) == [
        "topics/t/country=de/t+0+0000000001.json",
        "topics/t/country=fr/t+0+0000000000.json",
    ]
    assert lines(s3, other, "topics/t/country=fr/t+0+0000000000.json") == [
        {"country": "fr"},
        {"country": "fr"},
    ]
    field_task.stop()


def test_rotate_interval_cuts_objects_on_record_time(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    task, _ = make_task(TP0, **{"flush.size": "1000", "rotate.interval.ms": "60000"})
    times = [0, 30_000, 59_999, 60_000, 61_000, 120_000]
    put(task, [rec({"n": i}, i, ts=1_700_000_000_000 + t) for i, t in enumerate(times)])
    keys = object_keys(s3, bucket)
    assert keys == [
        "topics/t/partition=0/t+0+0000000000.json",
        "topics/t/partition=0/t+0+0000000003.json",
    ]
    assert [len(lines(s3, bucket, k)) for k in keys] == [3, 2]


def test_rotate_schedule_interval_writes_objects_open_too_long_on_the_wall_clock(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    task, _ = make_task(TP0, **{"flush.size": "1000", "rotate.schedule.interval.ms": "50"})
    put(task, [rec({"n": 0}, 0), rec({"n": 1}, 1)])
    assert object_keys(s3, bucket) == []
    time.sleep(0.1)  # past the interval: the next pre_commit closes the object
    task.pre_commit({TP0: 2})
    task.flush({})
    assert object_keys(s3, bucket) == ["topics/t/partition=0/t+0+0000000000.json"]
    assert task.pre_commit({TP0: 2}) == {TP0: 2}


def test_an_object_over_the_part_size_is_uploaded_in_parts(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    props = {"flush.size": "6", "format.class": "bytearray", "s3.part.size": str(5 * MiB)}
    task, _ = make_task(TP0, **props)
    values = [bytes([65 + i]) * MiB for i in range(6)]
    put(task, [rec(v, i) for i, v in enumerate(values)])
    key = "topics/t/partition=0/t+0+0000000000.bin"
    assert object_bytes(s3, bucket, key) == b"".join(v + b"\n" for v in values)
    head = object_metadata(s3, bucket, key)
    assert head["ETag"].strip('"').endswith("-2")  # a multipart ETag: two parts
    assert head["Metadata"]["sluice-batch-end"] == "6"


def test_null_values_fail_by_default_or_are_skipped_or_written(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    failing, _ = make_task(TP0, **{"flush.size": "2"})
    with pytest.raises(DataError, match=r"t-0@1: null value .*behavior.on.null.values"):
        failing.put([rec({"n": 0}, 0), rec(None, 1)])
    assert failing.details()["partitions"]["t-0"]["buffered_records"] == 0  # nothing taken
    ignoring, _ = make_task(TP1, **{"flush.size": "2", "behavior.on.null.values": "ignore"})
    put(ignoring, [rec({"n": 0}, 0, 1), rec(None, 1, 1), rec({"n": 2}, 2, 1)])
    assert lines(s3, bucket, "topics/t/partition=1/t+1+0000000000.json") == [{"n": 0}, {"n": 2}]
    assert ignoring.pre_commit({TP1: 3}) == {TP1: 3}
    other = s3.new_bucket()
    writing = S3SinkTask()
    writing.initialize(SinkContext({TP0}))
    writing.start({**s3.props(other), "flush.size": "2", "behavior.on.null.values": "write"})
    writing.open([TP0])
    put(writing, [rec(None, 0), rec({"n": 1}, 1)])
    assert lines(s3, other, "topics/t/partition=0/t+0+0000000000.json") == [None, {"n": 1}]
    writing.stop()


def test_a_bad_record_refuses_its_batch_whole_and_the_good_ones_go_through_alone(
    s3: S3Server, bucket: str, make_task: MakeTask
) -> None:
    task, _ = make_task(TP0, **{"flush.size": "3", "format.class": "parquet"})
    batch = [rec({"id": 0}, 0), rec(b"\x01raw", 1), rec({"id": 2}, 2), rec({"id": 3}, 3)]
    with pytest.raises(DataError, match=r"t-0@1: format.class=parquet needs struct"):
        task.put(batch)
    assert object_keys(s3, bucket) == []
    refused = []
    for record in batch:  # what the runtime does under errors.tolerance=all
        try:
            task.put([record])
        except DataError:
            refused.append(record.kafka_offset)
    task.flush({})
    assert refused == [1]
    key = "topics/t/partition=0/t+0+0000000000.snappy.parquet"
    assert pq.read_table(io.BytesIO(object_bytes(s3, bucket, key))).to_pylist() == [
        {"id": 0},
        {"id": 2},
        {"id": 3},
    ]


def test_s3_going_away_mid_stream_is_retried_and_loses_nothing(s3: S3Server, bucket: str) -> None:
    proxy = TcpProxy(s3.port).start()
    task, context = S3SinkTask(), SinkContext({TP0})
    task.initialize(context)
    task.start({**s3.props(bucket), "store.url": proxy.url, "flush.size": "2"})
    task.open([TP0])
    try:
        put(task, [rec({"n": 0}, 0), rec({"n": 1}, 1)])
        proxy.cut()
        task.put([rec({"n": 2}, 2), rec({"n": 3}, 3)])  # closes a batch: its upload fails
        unreachable = f"store.url: cannot reach the S3 endpoint {proxy.url}"
        with pytest.raises(RetriableError, match=unreachable):
            task.flush({})
        with pytest.raises(RetriableError, match=unreachable):  # the runtime retries later
            task.pre_commit({TP0: 4})
        assert task.details()["partitions"]["t-0"]["committed_offset"] == 2
        proxy.start()  # S3 is back; the runtime hands the same records again after a backoff
        put(task, [rec({"n": 2}, 2), rec({"n": 3}, 3), rec({"n": 4}, 4), rec({"n": 5}, 5)])
        assert task.pre_commit({TP0: 6}) == {TP0: 6}
    finally:
        task.stop()
        proxy.cut()
    keys = object_keys(s3, bucket)
    assert [v for key in keys for v in lines(s3, bucket, key)] == [{"n": i} for i in range(6)]
