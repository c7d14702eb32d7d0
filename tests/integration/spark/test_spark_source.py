"""The sluice data source on a real broker: batch reads, streaming, schema and Arrow types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from tests.integration.spark.streams import available_now_stream
from tests.integration.spark.topics import LogTopic

pytestmark = pytest.mark.slow


def _reader(spark, broker: BrokerProcess, **options: str):
    reader = spark.read.format("sluice").option("bootstrap.servers", broker.bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def test_batch_reads_every_partition_with_the_kafka_schema(
    spark, broker: BrokerProcess, topic: LogTopic
) -> None:
    topic.create(2)
    topic.produce(
        [b"a0", b"a1", b"a2"],
        partition=0,
        keys=[b"k", None, b"k"],
        headers=[("h", b"x")],
    )
    topic.produce([b"b0", b"b1"], partition=1)

    df = _reader(spark, broker, subscribe=topic.name, includeHeaders="true")
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("key", "binary"),
        ("value", "binary"),
        ("topic", "string"),
        ("partition", "int"),
        ("offset", "bigint"),
        ("timestamp", "timestamp"),
        ("timestampType", "int"),
        ("headers", "array<struct<key:string,value:binary>>"),
    ]
    rows = sorted(df.collect(), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset, bytes(r.value)) for r in rows] == [
        (0, 0, b"a0"),
        (0, 1, b"a1"),
        (0, 2, b"a2"),
        (1, 0, b"b0"),
        (1, 1, b"b1"),
    ]
    assert rows[0].key == b"k" and rows[1].key is None
    assert [(h.key, bytes(h.value)) for h in rows[0].headers] == [("h", b"x")]
    assert all(r.topic == topic.name and r.timestampType == 0 for r in rows)
    assert rows[0].timestamp.year >= 2024


def test_batch_offset_options_and_assign(spark, broker: BrokerProcess, topic: LogTopic) -> None:
    topic.create(2)
    topic.produce([b"%d" % i for i in range(10)], partition=0)
    topic.produce([b"p1-%d" % i for i in range(4)], partition=1)

    def offsets(**options: str) -> list[tuple[int, int]]:
        df = _reader(spark, broker, **options)
        return sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())

    starting = json.dumps({topic.name: {"0": 3, "1": -2}})
    ending = json.dumps({topic.name: {"0": 5, "1": -1}})
    assert offsets(subscribe=topic.name, startingOffsets=starting, endingOffsets=ending) == [
        (0, 3),
        (0, 4),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 3),
    ]
    assign = json.dumps({topic.name: [1]})
    assert offsets(assign=assign, startingOffsets=json.dumps({topic.name: {"1": 2}})) == [
        (1, 2),
        (1, 3),
    ]
    assert offsets(subscribe=topic.name, startingOffsets="latest") == []
    pattern = topic.name.replace("-", ".") + "|no-such-topic"
    assert len(offsets(subscribePattern=pattern)) == 14


def test_bad_options_name_the_option(spark, broker: BrokerProcess, topic_name: str) -> None:
    with pytest.raises(Exception, match="startingOffsets"):
        _reader(spark, broker, subscribe=topic_name, startingOffsets="{oops").collect()
    with pytest.raises(Exception, match="exactly one of subscribe"):
        _reader(spark, broker).collect()


def _stream(spark, broker: BrokerProcess, topic: str, out: Path, **options: str):
    columns = ("CAST(value AS STRING) AS value", "partition", "offset")
    return available_now_stream(spark, broker.bootstrap, topic, out, columns, **options)


def test_stream_available_now_splits_the_backlog_and_resumes_from_the_checkpoint(
    spark, broker: BrokerProcess, topic: LogTopic, tmp_path: Path
) -> None:
    topic.create(2)
    topic.produce([b"a%d" % i for i in range(30)], partition=0)
    topic.produce([b"b%d" % i for i in range(20)], partition=1)

    query = _stream(spark, broker, topic.name, tmp_path, maxOffsetsPerTrigger="15")
    query.awaitTermination(120)
    assert query.exception() is None
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(batches) == 4  # 50 records, at most 15 a batch
    assert all(p["numInputRows"] <= 15 for p in batches)
    end = json.loads(batches[-1]["sources"][0]["endOffset"])
    assert end == {topic.name: {"0": 30, "1": 20}}

    topic.produce([b"a%d" % i for i in range(30, 35)], partition=0)
    again = _stream(spark, broker, topic.name, tmp_path, maxOffsetsPerTrigger="15")
    again.awaitTermination(120)
    assert again.exception() is None
    rows = spark.read.parquet(str(tmp_path / "data")).collect()
    assert sorted((r.partition, r.offset) for r in rows) == sorted(
        [(0, i) for i in range(35)] + [(1, i) for i in range(20)]
    )
    assert {r.value for r in rows if r.partition == 0} == {f"a{i}" for i in range(35)}
