"""Objects written from the sink's upload process (a child with its own boto3 client), against a
real S3 endpoint: the same objects as the thread writes, and the same failures in the same words."""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator

import pytest

import connectors.s3.sink as s3_sink
import connectors.s3.upload_process as upload_process
from connectors.api import ConnectError, RetriableError, SinkRecord, TopicPartition
from connectors.s3.config import S3SinkConfig
from connectors.s3.sink import S3SinkTask
from connectors.s3.upload_process import UploadProcess
from harness.s3_server import S3Server
from tests.integration.s3.objects import object_bytes, object_keys, object_metadata
from tests.integration.s3.tcp_proxy import TcpProxy
from tests.support.plugin_harness import SinkContext

MiB = 1024 * 1024
TP0 = TopicPartition("t", 0)


@pytest.fixture
def process(s3: S3Server, bucket: str) -> Iterator[UploadProcess]:
    uploads = UploadProcess(S3SinkConfig.from_props({**s3.props(bucket), "topics": "t"}))
    yield uploads
    uploads.close()


def rec(value: bytes, offset: int) -> SinkRecord:
    return SinkRecord(topic="t", partition=0, kafka_offset=offset, value=value)


def test_the_child_writes_the_same_object_and_metadata_in_one_put_or_in_parts(
    s3: S3Server, bucket: str, process: UploadProcess
) -> None:
    small, large = os.urandom(3 * MiB), os.urandom(6 * MiB)
    assert process.put(bucket, "one.bin", small, 5 * MiB, {"sluice-records": "3"}) == 1
    assert process.put(bucket, "parts.bin", large, 5 * MiB, {"sluice-records": "6"}) == 2
    assert object_bytes(s3, bucket, "one.bin") == small
    assert object_bytes(s3, bucket, "parts.bin") == large
    assert object_metadata(s3, bucket, "parts.bin")["Metadata"] == {"sluice-records": "6"}
    assert object_metadata(s3, bucket, "parts.bin")["ETag"].strip('"').endswith("-2")


def test_a_killed_child_is_a_retriable_error_and_the_next_attempt_starts_a_new_one(
    s3: S3Server, bucket: str, process: UploadProcess
) -> None:
    process.put(bucket, "first.bin", b"1" * 10, 5 * MiB, {})
    first = process.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    with pytest.raises(RetriableError, match=r"upload process stopped \(exit code -9\)"):
        process.put(bucket, "second.bin", b"2" * 10, 5 * MiB, {})
    process.put(bucket, "second.bin", b"2" * 10, 5 * MiB, {})  # the retry
    assert process.pid not in (None, first)
    assert object_keys(s3, bucket) == ["first.bin", "second.bin"]
    assert object_bytes(s3, bucket, "second.bin") == b"2" * 10


def test_the_child_exits_when_the_task_closes_it(process: UploadProcess, bucket: str) -> None:
    process.put(bucket, "k.bin", b"x", 5 * MiB, {})
    pid = process.pid
    assert pid is not None
    process.close()
    with pytest.raises(ProcessLookupError):  # reaped: no process of that id is left
        os.kill(pid, 0)


@pytest.fixture
def via_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every object through the upload process, however small."""
    monkeypatch.setattr(s3_sink, "PROCESS_MIN_BYTES", 0)


@pytest.mark.usefixtures("via_process")
def test_a_bucket_gone_is_told_as_from_the_thread_and_nothing_is_committed(
    s3: S3Server, bucket: str
) -> None:
    task = S3SinkTask()
    task.initialize(SinkContext({TP0}))
    task.start({**s3.props(bucket), "topics": "t", "flush.size": "2", "format.class": "bytearray"})
    task.open([TP0])
    try:
        task.put([rec(b"a", 0), rec(b"b", 1)])
        task.flush({})
        assert object_bytes(s3, bucket, "topics/t/partition=0/t+0+0000000000.bin") == b"a\nb\n"
        client = s3.client()
        client.delete_object(Bucket=bucket, Key="topics/t/partition=0/t+0+0000000000.bin")
        client.delete_bucket(Bucket=bucket)
        task.put([rec(b"c", 2), rec(b"d", 3)])
        with pytest.raises(ConnectError, match=rf"s3.bucket.name: bucket '{bucket}' does not"):
            task.flush({})
        assert task.details()["partitions"]["t-0"]["committed_offset"] == 2
    finally:
        task.stop()


@pytest.mark.usefixtures("via_process")
def test_s3_going_away_is_retriable_and_the_records_land_once_it_is_back(
    s3: S3Server, bucket: str
) -> None:
    proxy = TcpProxy(s3.port).start()
    task = S3SinkTask()
    task.initialize(SinkContext({TP0}))
    task.start(
        {**s3.props(bucket), "store.url": proxy.url, "flush.size": "2", "format.class": "bytearray"}
    )
    task.open([TP0])
    try:
        proxy.cut()
        task.put([rec(b"0", 0), rec(b"1", 1)])
        with pytest.raises(RetriableError, match=f"cannot reach the S3 endpoint {proxy.url}"):
            task.flush({})
        proxy.start()
        task.put([rec(b"0", 0), rec(b"1", 1), rec(b"2", 2), rec(b"3", 3)])  # redelivered
        task.flush({})
        assert task.pre_commit({TP0: 4}) == {TP0: 4}
    finally:
        task.stop()
        proxy.cut()
    keys = object_keys(s3, bucket)
    assert b"".join(object_bytes(s3, bucket, key) for key in keys) == b"0\n1\n2\n3\n"


def test_closing_kills_a_child_stuck_in_a_put_and_the_put_fails_retriably(
    s3: S3Server, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upload_process, "STOP_TIMEOUT_S", 0.5)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        port = silent.getsockname()[1]
        props = {**s3.props(bucket), "topics": "t", "store.url": f"http://127.0.0.1:{port}"}
        uploads = UploadProcess(S3SinkConfig.from_props(props))
        failures: list[BaseException] = []

        def put() -> None:
            try:
                uploads.put(bucket, "stuck.bin", b"x" * 10, 5 * MiB, {})
            except BaseException as exc:
                failures.append(exc)

        putting = threading.Thread(target=put)
        putting.start()
        connection, _ = silent.accept()  # the child's PUT reached the server
        with connection:
            uploads.close()
            putting.join(10)
    assert not putting.is_alive()
    assert len(failures) == 1 and isinstance(failures[0], RetriableError)
    assert "upload process stopped (exit code -9) while writing stuck.bin" in str(failures[0])
