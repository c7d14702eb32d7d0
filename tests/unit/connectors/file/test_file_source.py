"""FileStreamSource: lines, offsets, growth, partial lines, truncation, rotation, resume."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.api import ConfigError, SchemaType
from connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask
from tests.support.plugin_harness import DictOffsetReader, SourceContext, drain


@pytest.fixture
def started() -> Iterator[list[FileStreamSourceTask]]:
    tasks: list[FileStreamSourceTask] = []
    yield tasks
    for task in tasks:
        task.stop()


def start_task(
    started: list[FileStreamSourceTask],
    path: Path,
    reader: DictOffsetReader | None = None,
    **props: str,
) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    task.initialize(SourceContext(reader or DictOffsetReader()))
    task.start({"file": str(path), "topic": "lines", **props})
    started.append(task)
    return task


def values(records: list) -> list[str]:
    return [r.value for r in records]


def test_reads_lines_with_kafka_offsets(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntwo\r\nthree\n")
    records = drain(start_task(started, path), 3)
    assert values(records) == ["one", "two", "three"]
    first = records[0]
    assert first.topic == "lines" and first.key is None
    assert first.value_schema is not None and first.value_schema.type is SchemaType.STRING
    assert first.source_partition == {"filename": str(path.resolve())}
    assert [r.source_offset for r in records] == [
        {"position": 4}, {"position": 9}, {"position": 15}
    ]


def test_non_ascii_positions_are_bytes(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("héllo\nwörld\n".encode() + b"bad \xff byte\n")
    records = drain(start_task(started, path), 3)
    assert values(records) == ["héllo", "wörld", "bad \ufffd byte"]
    assert records[-1].source_offset == {"position": path.stat().st_size}


def test_batch_size_bounds_each_poll(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(25)))
    task = start_task(started, path, **{"batch.size": "10"})
    sizes = [len(task.poll()) for _ in range(3)]
    assert sizes == [10, 10, 5]


def test_follows_growth_and_waits_for_partial_lines(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_text("a\n")
    task = start_task(started, path)
    assert values(drain(task, 1)) == ["a"]
    with path.open("a") as f:
        f.write("b\npart")
    assert values(drain(task, 1)) == ["b"]
    began = time.monotonic()
    assert task.poll() == []  # "part" has no newline yet
    assert 0.1 <= time.monotonic() - began < 1.0  # waited a little, no busy loop
    with path.open("a") as f:
        f.write("ial\n")
    [record] = drain(task, 1)
    assert record.value == "partial" and record.source_offset == {"position": 12}


def test_truncation_restarts_from_zero(tmp_path: Path, started: list, caplog) -> None:
    path = tmp_path / "in.txt"
    path.write_text("first line\nsecond line\n")
    task = start_task(started, path)
    assert len(drain(task, 2)) == 2
    path.write_text("new\n")  # truncate and rewrite, shorter than what was read
    records = drain(task, 1)
    assert values(records) == ["new"] and records[0].source_offset == {"position": 4}
    assert "truncated" in caplog.text


def test_rotation_reads_old_tail_then_new_file(tmp_path: Path, started: list) -> None:
    path = tmp_path / "app.log"
    path.write_text("old 1\n")
    task = start_task(started, path)
    assert values(drain(task, 1)) == ["old 1"]
    with path.open("a") as f:
        f.write("old 2\n")
    path.rename(tmp_path / "app.log.1")
    path.write_text("new 1\n")
    records = drain(task, 2)
    assert values(records) == ["old 2", "new 1"]
    assert records[-1].source_offset == {"position": 6}


def test_missing_file_is_waited_for(tmp_path: Path, started: list, caplog) -> None:
    path = tmp_path / "later.txt"
    task = start_task(started, path)
    assert task.poll() == []
    assert "does not exist" in caplog.text
    path.write_text("here\n")
    assert values(drain(task, 1)) == ["here"]


def test_resumes_from_stored_offset(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_text("a\nb\nc\n")
    reader = DictOffsetReader()
    first = start_task(started, path, reader)
    records = drain(first, 3)
    reader.commit(records[:2])  # only a and b were acknowledged
    first.stop()
    with path.open("a") as f:
        f.write("d\n")
    second = start_task(started, path, reader)
    assert values(drain(second, 2)) == ["c", "d"]


def test_resumes_from_offsets_stored_under_the_configured_name(
    tmp_path: Path, started: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("in.txt").write_text("a\nb\n")
    reader = DictOffsetReader({DictOffsetReader.key({"filename": "in.txt"}): {"position": 2}})
    assert values(drain(start_task(started, Path("in.txt"), reader), 1)) == ["b"]


def test_stored_offset_past_the_end_restarts(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_text("a\n")
    key = DictOffsetReader.key({"filename": str(path.resolve())})
    reader = DictOffsetReader({key: {"position": 999}})
    assert values(drain(start_task(started, path, reader), 1)) == ["a"]


def test_stop_makes_a_waiting_poll_return(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_text("")
    task = start_task(started, path)
    threading.Timer(0.05, task.stop).start()
    began = time.monotonic()
    assert task.poll() == []
    assert time.monotonic() - began < 0.5


def test_large_file_in_chunks(tmp_path: Path, started: list) -> None:
    path = tmp_path / "big.txt"
    lines = [f"{i:08d} " + "x" * 90 for i in range(30_000)]  # ~3 MB: several chunks
    path.write_text("\n".join(lines) + "\n")
    task = start_task(started, path, **{"batch.size": "5000"})
    records = drain(task, len(lines))
    assert values(records) == lines
    assert records[-1].source_offset == {"position": os.path.getsize(path)}


def test_connector_config_and_check(tmp_path: Path) -> None:
    connector = FileStreamSourceConnector()
    props = {"file": str(tmp_path / "x.txt"), "topic": "t", "batch.size": "7", "name": "n"}
    connector.start(props)
    assert connector.task_configs(4) == [{"file": props["file"], "topic": "t", "batch.size": "7"}]
    assert connector.check(props) == []  # missing file, but its folder exists
    assert connector.check({**props, "file": str(tmp_path / "no" / "x.txt")})
    assert connector.check({**props, "file": str(tmp_path)})  # a directory
    with pytest.raises(ConfigError, match="topic"):
        FileStreamSourceConnector().start({"file": "x"})


def test_details_show_the_file_position_and_lines_read(tmp_path: Path, started: list) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("one\ntwö\n".encode())
    partition = {"filename": str(path.resolve())}
    reader = DictOffsetReader({DictOffsetReader.key(partition): {"position": 4}})
    task = start_task(started, path, reader)
    assert task.details() == {"file": str(path.resolve()), "position": 4, "lines_read": 0}
    assert values(drain(task, 1)) == ["twö"]
    assert task.details() == {"file": str(path.resolve()), "position": 9, "lines_read": 1}


def test_details_say_when_the_file_is_waited_for(tmp_path: Path, started: list) -> None:
    task = start_task(started, tmp_path / "later.txt")
    assert task.poll() == []
    assert task.details()["waiting"] is True and task.details()["lines_read"] == 0
