"""Formats (encode/decode) and the partition writer's rotation, against an in-memory store."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from connectors.api import DataError, SinkRecord, TopicPartition, struct
from connectors.api.schema import INT64, STRING
from connectors.s3.formats import ByteArrayFormat, JsonFormat, ObjectFormat
from connectors.s3.parquet import ParquetFormat
from connectors.s3.partitioners import DefaultPartitioner, FieldPartitioner, Partitioner
from connectors.s3.uploader import Uploader
from connectors.s3.writer import Encoded, PartitionWriter, RotationPolicy

TP = TopicPartition("t", 0)


def rec(value: object, offset: int, timestamp: int | None = None) -> SinkRecord:
    return SinkRecord(topic="t", partition=0, kafka_offset=offset, value=value, timestamp=timestamp)


class Store:
    """Objects written by a writer; ``fail_next`` makes the next uploads raise."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, dict[str, str]]] = {}
        self.order: list[str] = []
        self.fail_next = 0

    def upload(self, key: str, data: bytes, meta: dict[str, str]) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise OSError("S3 is away")
        self.objects[key] = (data, meta)
        self.order.append(key)


def writer(
    store: Store, fmt: ObjectFormat, flush_size: int = 3, rotate_interval_ms: int = -1
) -> PartitionWriter:
    policy = RotationPolicy(flush_size, rotate_interval_ms, -1)
    return PartitionWriter(
        TP, fmt, "topics", policy, store.upload, None, Uploader(background=False)
    )


def feed(
    w: PartitionWriter, fmt: ObjectFormat, records: list[SinkRecord], p: Partitioner | None = None
) -> None:
    partitioner = p or DefaultPartitioner()
    for r in records:
        w.add(Encoded(r, partitioner.encode(r), fmt.encode(r), r.timestamp))


def test_json_lines_round_trip_and_refuse_what_json_cannot_hold() -> None:
    fmt = JsonFormat()
    values = [{"a": 1, "b": [1, 2]}, "text", 3.5, None, {"é": "ü"}]
    buffer = fmt.new_buffer()
    for i, v in enumerate(values):
        buffer.add(fmt.encode(rec(v, i)))
    data = buffer.finish()
    assert data.count(b"\n") == len(values) and data.endswith(b"\n")
    assert fmt.decode(data) == values
    with pytest.raises(DataError, match="t-0@7: the value is raw bytes"):
        fmt.encode(rec(b"\x00\x01", 7))
    with pytest.raises(DataError, match="not JSON serialisable"):
        fmt.encode(rec({"x": float("nan")}, 8))
    with pytest.raises(DataError, match="not JSON serialisable"):
        fmt.encode(rec({"x": {1, 2}}, 9))


def test_bytearray_appends_the_separator_and_splits_on_it() -> None:
    fmt = ByteArrayFormat(b"|")
    buffer = fmt.new_buffer()
    for encoded in (
        fmt.encode(rec(b"ab", 0)),
        fmt.encode(rec("cd", 1)),
        fmt.encode_null(rec(None, 2)),
    ):
        buffer.add(encoded)
    data = buffer.finish()
    assert data == b"ab|cd||"
    assert fmt.decode(data) == [b"ab", b"cd", b""]
    with pytest.raises(DataError, match="needs bytes or text values, got dict"):
        fmt.encode(rec({"a": 1}, 3))


def test_parquet_follows_the_connect_schema_and_refuses_non_structs() -> None:
    fmt = ParquetFormat()
    schema = struct(("id", INT64), ("name", STRING.as_optional()))
    buffer = fmt.new_buffer()
    for i in range(3):
        r = SinkRecord(
            topic="t",
            partition=0,
            kafka_offset=i,
            value={"id": i, "name": f"n{i}"},
            value_schema=schema,
        )
        encoded = fmt.encode(r)
        assert buffer.accepts(encoded)
        buffer.add(encoded)
    table = pq.read_table(io.BytesIO(buffer.finish()))
    assert str(table.schema.field("id").type) == "int64"
    assert table.to_pylist() == [{"id": i, "name": f"n{i}"} for i in range(3)]
    with pytest.raises(DataError, match=r"needs struct .*got bytes"):
        fmt.encode(rec(b"raw", 4))
    with pytest.raises(DataError, match="does not fit a Parquet schema"):
        bad = SinkRecord(
            topic="t", partition=0, kafka_offset=5, value={"id": "x"}, value_schema=schema
        )
        fmt.encode(bad)


def test_flush_size_cuts_objects_named_by_their_first_offset() -> None:
    store, fmt = Store(), JsonFormat()
    w = writer(store, fmt, flush_size=3)
    feed(w, fmt, [rec({"n": i}, i) for i in range(7)])
    assert store.order == [
        "topics/t/partition=0/t+0+0000000000.json",
        "topics/t/partition=0/t+0+0000000003.json",
    ]
    assert w.committed_offset == 6 and w.buffered == 1
    data, meta = store.objects["topics/t/partition=0/t+0+0000000003.json"]
    assert fmt.decode(data) == [{"n": 3}, {"n": 4}, {"n": 5}]
    assert meta == {"sluice-batch-start": "3", "sluice-batch-end": "6", "sluice-records": "3"}


def test_rotate_interval_uses_record_time() -> None:
    store, fmt = Store(), JsonFormat()
    w = writer(store, fmt, flush_size=100, rotate_interval_ms=1000)
    times = [0, 400, 999, 1000, 1500, 2100]
    feed(w, fmt, [rec({"n": i}, i, timestamp=t) for i, t in enumerate(times)])
    # a record 1000 ms past the object's first closes it before being added
    assert [fmt.decode(store.objects[k][0]) for k in store.order] == [
        [{"n": 0}, {"n": 1}, {"n": 2}],
        [{"n": 3}, {"n": 4}],
    ]
    assert w.buffered == 1


def test_a_batch_over_several_paths_writes_its_head_last() -> None:
    store, fmt = Store(), JsonFormat()
    w = writer(store, fmt, flush_size=4)
    values = [{"c": "fr"}, {"c": "de"}, {"c": "fr"}, {"c": "it"}]
    feed(w, fmt, [rec(v, 10 + i) for i, v in enumerate(values)], FieldPartitioner(["c"]))
    assert store.order == [
        "topics/t/c=de/t+0+0000000011.json",
        "topics/t/c=it/t+0+0000000013.json",
        "topics/t/c=fr/t+0+0000000010.json",
    ]
    assert {meta["sluice-batch-start"] for _, meta in store.objects.values()} == {"10"}
    assert {meta["sluice-batch-end"] for _, meta in store.objects.values()} == {"14"}


def test_a_failed_upload_is_retried_and_a_redelivered_batch_is_not_taken_twice() -> None:
    store, fmt = Store(), JsonFormat()
    w = writer(store, fmt, flush_size=2)
    batch = [rec({"n": i}, i) for i in range(5)]
    store.fail_next = 1
    with pytest.raises(OSError):
        feed(w, fmt, batch)  # fails writing the first object, after taking records 0 and 1
    feed(w, fmt, batch)  # the runtime hands the same batch again
    assert [fmt.decode(store.objects[k][0]) for k in store.order] == [
        [{"n": 0}, {"n": 1}],
        [{"n": 2}, {"n": 3}],
    ]
    assert w.committed_offset == 4 and w.buffered == 1


def test_a_parquet_schema_change_starts_a_new_object() -> None:
    store, fmt = Store(), ParquetFormat()
    w = writer(store, fmt, flush_size=10)
    feed(w, fmt, [rec({"a": 1}, 0), rec({"a": 2}, 1), rec({"b": "x"}, 2)])
    assert store.order == ["topics/t/partition=0/t+0+0000000000.snappy.parquet"]
    assert fmt.decode(store.objects[store.order[0]][0]) == [{"a": 1}, {"a": 2}]
    assert w.buffered == 1


def test_a_run_is_encoded_whole_or_refused_at_its_first_bad_record() -> None:
    fmt = ByteArrayFormat()
    raw = [rec(b"a", 0), rec(b"b", 1)]
    assert fmt.encode_run(raw) == [b"a", b"b"]
    assert fmt.encode_run([rec(b"a", 0), rec("text", 1), rec(bytearray(b"c"), 2)]) == [
        b"a",
        b"text",
        b"c",
    ]
    with pytest.raises(DataError, match=r"t-0@1: format.class=bytearray needs bytes"):
        fmt.encode_run([rec(b"a", 0), rec({"a": 1}, 1)])
    assert fmt.encode_run([rec(b"a", 0), rec(None, 1)]) is None  # nulls go one by one
    assert JsonFormat().encode_run([rec({"n": 1}, 0), rec("x", 1)]) == [b'{"n": 1}', b'"x"']
    assert JsonFormat().encode_run([rec({"n": 1}, 0), rec(None, 1)]) is None
    with pytest.raises(DataError, match=r"t-0@1: the value is raw bytes"):
        JsonFormat().encode_run([rec({"n": 1}, 0), rec(b"x", 1)])
    assert ParquetFormat().encode_run([rec({"a": 1}, 0)]) is None


@pytest.mark.parametrize("sizes", [[7], [2, 5], [1, 1, 1, 4], [3, 3, 1]])
def test_runs_make_the_same_objects_as_records_one_by_one(sizes: list[int]) -> None:
    fmt = ByteArrayFormat()
    records = [rec(b"v%d" % i, 100 + 2 * i) for i in range(7)]  # offsets with gaps
    one_by_one, by_runs = Store(), Store()
    feed(writer(one_by_one, fmt), fmt, records)
    w, start = writer(by_runs, fmt), 0
    for size in sizes:
        run = records[start : start + size]
        w.add_run(run, [r.value for r in run], "partition=0")
        start += size
    assert by_runs.objects == one_by_one.objects and by_runs.order == one_by_one.order
    assert by_runs.order == [
        "topics/t/partition=0/t+0+0000000100.bin",
        "topics/t/partition=0/t+0+0000000106.bin",
    ]
    assert w.committed_offset == 111 and w.buffered == 1 and w.next_offset == 113


def test_a_redelivered_run_takes_only_the_records_after_those_taken() -> None:
    store, fmt = Store(), ByteArrayFormat()
    w = writer(store, fmt, flush_size=2)
    batch = [rec(b"%d" % i, i) for i in range(5)]
    store.fail_next = 1
    with pytest.raises(OSError):
        w.add_run(batch, [r.value for r in batch], "partition=0")  # fails on the first object
    w.add_run(batch, [r.value for r in batch], "partition=0")  # the runtime hands it again
    assert [store.objects[k][0] for k in store.order] == [b"0\n1\n", b"2\n3\n"]
    assert w.committed_offset == 4 and w.buffered == 1
