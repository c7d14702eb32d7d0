"""FileStreamSink: lines as Kafka writes them, durable flush, connector checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from connectors.api import SinkRecord, TopicPartition
from connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from tests.support.plugin_harness import SinkContext


def record(value: Any, offset: int = 0) -> SinkRecord:
    return SinkRecord(topic="t", partition=0, value=value, kafka_offset=offset)


def start(path: Path) -> FileStreamSinkTask:
    task = FileStreamSinkTask()
    task.initialize(SinkContext({TopicPartition("t", 0)}))
    task.start({"file": str(path), "topics": "t"})
    return task


def test_writes_values_as_kafka_does(tmp_path: Path) -> None:
    path = tmp_path / "out" / "x.txt"  # the folder is created
    task = start(path)
    task.put([record("text"), record(b"bytes \xc3\xa9"), record(None), record(42),
              record({"k": 1})])
    task.put([])
    offsets = {TopicPartition("t", 0): 5}
    assert task.pre_commit(offsets) == offsets  # flush, then these are safe to commit
    assert path.read_text() == "text\nbytes é\nnull\n42\n{'k': 1}\n"
    task.stop()


def test_appends_across_restarts(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("existing\n")
    for batch in (["a", "b"], ["c"]):
        task = start(path)
        task.put([record(v) for v in batch])
        task.stop()
    assert path.read_text() == "existing\na\nb\nc\n"


def test_flush_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    task = start(path)
    task.put([record("durable")])
    task.flush({})
    # Another reader sees the bytes once flush returned (fsync made them durable).
    assert os.path.getsize(path) == len("durable\n")
    task.stop()


def test_connector_task_configs_and_check(tmp_path: Path) -> None:
    connector = FileStreamSinkConnector()
    props = {"name": "s", "file": str(tmp_path / "x.txt"), "topics": "t"}
    connector.start(props)
    assert connector.task_configs(3) == [props, props, props]
    assert connector.check(props) == []
    # The task creates missing directories, so only an unusable ancestor is a problem.
    assert connector.check({**props, "file": str(tmp_path / "missing" / "x.txt")}) == []
    (tmp_path / "plain").write_text("")
    problems = connector.check({**props, "file": str(tmp_path / "plain" / "sub" / "x.txt")})
    assert problems and "not a directory" in problems[0]
    assert connector.check({**props, "file": str(tmp_path)})  # a directory
    with pytest.raises(ValueError, match="file"):
        FileStreamSinkConnector().start({"topics": "t"})



def test_details_show_the_file_and_lines_written(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    task = start(path)
    assert task.details() == {"file": str(path), "lines_written": 0}
    task.put([record("a"), record("b", 1)])
    task.put([record({"k": 1}, 2)])  # the slower path of non-text values counts too
    assert task.details() == {"file": str(path), "lines_written": 3}
    task.stop()
