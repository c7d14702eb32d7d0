"""failOnDataLoss on a real broker: records deleted with DeleteRecords, topics deleted.

Spark runs the batch and streaming queries (the shared session); the
executor's read of a range and the stream reader's choice of the next batch
end are also driven directly, without Spark, where a race with retention or
a topic deletion cannot be staged through a query.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from log_engine.client import SyncAdmin, TopicPartition
from spark_sinks.log_access import DataLoss, DataLossError, read_range
from spark_sinks.options import SourceOptions
from spark_sinks.query import source_options
from spark_sinks.sink_config import SparkSinkConfig
from tests.integration.spark.streams import available_now_stream
from tests.integration.spark.topics import LogTopic

pytestmark = pytest.mark.slow


def _delete_below(broker: BrokerProcess, topic: str, offset: int) -> None:
    """DeleteRecords: partition 0 of ``topic`` starts at ``offset`` afterwards."""
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        low = admin.delete_records({TopicPartition(topic, 0): offset})
    assert low[TopicPartition(topic, 0)] == offset


def _reader(spark, broker: BrokerProcess, topic: str, **options: str):
    reader = spark.read.format("sluice").option("bootstrap.servers", broker.bootstrap)
    reader = reader.option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def _assert_loss_message(text: str, topic: str, wanted: int, earliest: int) -> None:
    assert f"{topic}-0" in text
    assert f"must read from offset {wanted}" in text
    assert f"earliest offset still in the log is {earliest}" in text
    assert "failOnDataLoss=false" in text


def test_batch_starting_offset_below_earliest(
    spark, broker: BrokerProcess, topic: LogTopic
) -> None:
    topic.create()
    topic.produce([b"v%d" % i for i in range(10)], partition=0)
    _delete_below(broker, topic.name, 4)
    starting = json.dumps({topic.name: {"0": 1}})

    with pytest.raises(Exception, match="failOnDataLoss: true or false, not 'maybe'"):
        _reader(spark, broker, topic.name, failOnDataLoss="maybe").collect()

    with pytest.raises(Exception) as failed:
        _reader(spark, broker, topic.name, startingOffsets=starting).collect()
    _assert_loss_message(str(failed.value), topic.name, 1, 4)

    rows = _reader(
        spark, broker, topic.name, startingOffsets=starting, failOnDataLoss="False"
    ).collect()
    assert sorted((r.offset, bytes(r.value)) for r in rows) == [
        (i, b"v%d" % i) for i in range(4, 10)
    ]


def _stream(spark, broker: BrokerProcess, topic: str, out: Path, **options: str):
    columns = ("CAST(value AS STRING) AS value", "offset")
    return available_now_stream(spark, broker.bootstrap, topic, out, columns, **options)


def test_stream_checkpointed_position_deleted_between_batches(
    spark, broker: BrokerProcess, topic: LogTopic, tmp_path: Path
) -> None:
    topic.create()
    topic.produce([b"a%d" % i for i in range(10)], partition=0)
    first = _stream(spark, broker, topic.name, tmp_path)
    first.awaitTermination(120)
    assert first.exception() is None

    # The checkpoint says "read on from 10"; 10..14 go before the next batch.
    topic.produce([b"a%d" % i for i in range(10, 20)], partition=0)
    _delete_below(broker, topic.name, 15)

    def written() -> list[tuple[int, str]]:
        rows = spark.read.parquet(str(tmp_path / "data")).collect()
        return sorted((r.offset, r.value) for r in rows)

    failing = _stream(spark, broker, topic.name, tmp_path)
    with pytest.raises(Exception) as failed:
        failing.awaitTermination(120)
    _assert_loss_message(str(failed.value), topic.name, 10, 15)
    assert written() == [(i, f"a{i}") for i in range(10)]  # nothing skipped, nothing written

    # Same checkpoint, option changed: the failed batch is planned again and skips 10..14.
    skipping = _stream(spark, broker, topic.name, tmp_path, failOnDataLoss="false")
    skipping.awaitTermination(120)
    assert skipping.exception() is None
    assert written() == [(i, f"a{i}") for i in [*range(10), *range(15, 20)]]


def test_executor_read_after_retention_passed_the_planned_start(
    broker: BrokerProcess, topic: LogTopic, caplog: pytest.LogCaptureFixture
) -> None:
    """A range planned as [2, 10) whose first records were deleted before it is read."""
    topic.create()
    topic.produce([b"v%d" % i for i in range(10)], partition=0)
    _delete_below(broker, topic.name, 6)

    def read(fail: bool) -> list[int]:
        batches = read_range(broker.bootstrap, topic.name, 0, 2, 10, False, DataLoss(fail))
        return [o for b in batches for o in b.column("offset").to_pylist()]

    with pytest.raises(DataLossError) as failed:
        read(True)
    _assert_loss_message(str(failed.value), topic.name, 2, 6)

    with caplog.at_level(logging.WARNING, logger="spark_sinks.log_access"):
        assert read(False) == [6, 7, 8, 9]
    assert any(
        "earliest offset still in the log is 6" in r.getMessage()
        and "reading on from offset 6" in r.getMessage()
        for r in caplog.records
    )


def test_partitions_gone_or_added_without_their_first_records_while_streaming(
    broker: BrokerProcess,
    topic_name: str,
    make_topic: Callable,
    produce: Callable,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The stream reader choosing the next batch's end, and an executor waiting on records."""
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    from spark_sinks.source import SluiceStreamReader

    gone, kept, added = topic_name, f"{topic_name}-kept", f"{topic_name}-added"
    for topic in (gone, kept, added):
        make_topic(topic)
    produce(gone, [b"x"] * 3, partition=0)
    produce(kept, [b"y"] * 5, partition=0)
    produce(added, [b"z"] * 4, partition=0)
    _delete_below(broker, added, 2)  # before the query saw it: 0 and 1 were never read
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.delete_topics([gone])

    def next_end(fail: str, start: dict) -> dict:
        props = {
            "bootstrap.servers": broker.bootstrap,
            "subscribe": f"{gone},{kept},{added}",
            "failOnDataLoss": fail,
        }
        reader = SluiceStreamReader(SourceOptions.parse(props, streaming=True))
        try:
            return reader.latestOffset(start, ReadAllAvailable())
        finally:
            reader.stop()

    with pytest.raises(DataLossError, match=f"{gone}-0: the partition no longer exists"):
        next_end("true", {gone: {"0": 3}, kept: {"0": 2}, added: {"0": 4}})
    with pytest.raises(DataLossError) as failed:
        next_end("true", {kept: {"0": 2}})
    _assert_loss_message(str(failed.value), added, 0, 2)
    assert next_end("false", {gone: {"0": 3}, kept: {"0": 2}}) == {
        kept: {"0": 5},
        added: {"0": 4},
    }

    # An executor reading the deleted partition notices it is gone instead of waiting.
    with caplog.at_level(logging.WARNING, logger="spark_sinks.log_access"):
        assert list(read_range(broker.bootstrap, gone, 0, 0, 3, False, DataLoss(False))) == []
    warned = [r.getMessage() for r in caplog.records]
    assert any(f"{gone}-0: the partition no longer exists" in m for m in warned)


def test_spark_sink_passes_fail_on_data_loss_to_the_source() -> None:
    base = {"topics": "t", "output.path": "/tmp/out", "checkpoint.location": "/tmp/ck"}
    worker = "127.0.0.1:19092"  # the cluster a task's context names
    assert (
        source_options(SparkSinkConfig.from_props(base).reading(worker))["failOnDataLoss"] == "true"
    )
    props = {**base, "fail.on.data.loss": "false"}
    options = source_options(SparkSinkConfig.from_props(props).reading(worker))
    assert options["bootstrap.servers"] == worker
    assert SourceOptions.parse(options, streaming=True).fail_on_data_loss is False
