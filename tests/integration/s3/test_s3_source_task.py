"""The S3 source task against a real S3 endpoint: generic mode (lines, objects) and restore
mode, each resuming from stored offsets."""

from __future__ import annotations

import re
import time

import pytest

from connectors.api import ConnectError, SinkRecord, SourceRecord, TopicPartition
from connectors.s3.sink import S3SinkTask
from connectors.s3.source import S3SourceTask
from harness.s3_server import S3Server
from tests.support.plugin_harness import DictOffsetReader, SinkContext, SourceContext


def start_source(reader: DictOffsetReader, props: dict[str, str]) -> S3SourceTask:
    task = S3SourceTask()
    task.initialize(SourceContext(reader))
    task.start({"s3.poll.interval.ms": "10", **props})
    return task


def poll_all(task: S3SourceTask, count: int, timeout_s: float = 20.0) -> list[SourceRecord]:
    records: list[SourceRecord] = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count:
        assert time.monotonic() < deadline, f"only {len(records)} of {count} records"
        records.extend(task.poll())
    return records


def test_generic_lines_are_read_once_each_and_new_objects_are_picked_up(
    s3: S3Server, bucket: str
) -> None:
    client = s3.client()
    client.put_object(Bucket=bucket, Key="in/a.txt", Body=b"a1\na2\r\na3\n")
    client.put_object(Bucket=bucket, Key="in/b.txt", Body=b"b1\nb2")
    client.put_object(Bucket=bucket, Key="elsewhere/x.txt", Body=b"not mine\n")
    props = {
        **s3.props(bucket),
        "mode": "generic",
        "s3.prefix": "in/",
        "topic": "lines",
        "record.batch.max.size": "2",
    }
    offsets = DictOffsetReader()
    task = start_source(offsets, props)
    records = poll_all(task, 5)
    assert [(r.key, r.value) for r in records] == [
        ("in/a.txt", "a1"),
        ("in/a.txt", "a2"),
        ("in/a.txt", "a3"),
        ("in/b.txt", "b1"),
        ("in/b.txt", "b2"),
    ]
    assert {r.topic for r in records} == {"lines"}
    assert records[2].source_offset == {"line": 3, "done": True}
    offsets.commit(records[:4])  # b.txt was half acknowledged when the task stopped
    task.stop()
    client.put_object(Bucket=bucket, Key="in/0-earlier-name.txt", Body=b"c1\n")
    again = start_source(offsets, props)
    more = poll_all(again, 2)
    assert sorted(r.value for r in more) == ["b2", "c1"]
    assert again.poll() == []
    assert again.details() == {"mode": "generic", "objects_read": 2, "records_read": 2}


def test_generic_objects_become_one_bytes_record_each(s3: S3Server, bucket: str) -> None:
    s3.client().put_object(Bucket=bucket, Key="blobs/1.bin", Body=b"\x00\x01\n\x02")
    task = start_source(
        DictOffsetReader(),
        {
            **s3.props(bucket),
            "mode": "GENERIC",
            "s3.prefix": "blobs/",
            "topic": "blobs",
            "record.unit": "object",
        },
    )
    [record] = poll_all(task, 1)
    assert (record.key, record.value, record.source_offset) == (
        "blobs/1.bin",
        b"\x00\x01\n\x02",
        {"done": True},
    )


def write_backup(s3: S3Server, bucket: str, counts: dict[int, int], flush_size: int) -> None:
    sink = S3SinkTask()
    sink.initialize(SinkContext())
    sink.start({**s3.props(bucket), "topics": "orders", "flush.size": str(flush_size)})
    sink.open([TopicPartition("orders", p) for p in counts])
    sink.put(
        [
            SinkRecord(topic="orders", partition=p, kafka_offset=i, value={"p": p, "i": i})
            for p, n in counts.items()
            for i in range(n)
        ]
    )
    sink.flush({})  # the background upload of the closed batches
    sink.stop()


def test_restore_reads_the_backup_into_the_same_partitions_in_order(
    s3: S3Server, bucket: str
) -> None:
    write_backup(s3, bucket, {0: 6, 1: 4, 2: 2}, flush_size=2)
    props = {**s3.props(bucket), "mode": "restore", "record.batch.max.size": "3"}
    offsets = DictOffsetReader()
    task = start_source(offsets, props)
    records = poll_all(task, 12)
    for p, n in {0: 6, 1: 4, 2: 2}.items():
        mine = [r for r in records if r.partition == p]
        assert [r.value for r in mine] == [{"p": p, "i": i} for i in range(n)]
        assert {r.topic for r in mine} == {"orders"}
    # acknowledged: partition 0 up to the middle of its second object
    offsets.commit([r for r in records if r.partition == 0][:3])
    task.stop()
    again = start_source(offsets, {**props, "restore.topics": "orders"})
    rest = poll_all(again, 9)
    assert [r.value["i"] for r in rest if r.partition == 0] == [3, 4, 5]
    assert len([r for r in rest if r.partition == 1]) == 4
    assert again.poll() == []


def test_restore_fails_naming_an_object_it_cannot_decode(s3: S3Server, bucket: str) -> None:
    key = "topics/orders/partition=0/orders+0+0000000000.json"
    s3.client().put_object(Bucket=bucket, Key=key, Body=b'{"ok": 1}\nnot json\n')
    task = start_source(DictOffsetReader(), {**s3.props(bucket), "mode": "restore"})
    expected = re.escape(f"decoded as json: object {key}: Expecting value")
    with pytest.raises(ConnectError, match=expected):
        task.poll()
