"""Conformance of the bundled file connectors to the plugin API's contracts.

Each bundled connector gets the same checks: its lifecycle runs as the runtime
drives it (start -> task_configs -> task start/poll|put/stop), ``stop`` is
safe at any point, and a task restarted from the committed offsets loses
nothing: a source re-reads exactly what was not committed, a sink's output
holds every record up to its committed offsets.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from connect_worker.plugins import PluginRegistry
from connect_worker.validation import validate_connector_config
from connectors.api import SinkConnector, SinkRecord, SourceConnector, TopicPartition
from tests.support.plugin_harness import DictOffsetReader, SinkContext, SourceContext, drain


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry.load(entry_points=False)


def source_task(registry: PluginRegistry, props: dict[str, str], reader: DictOffsetReader):
    connector = registry.connector_class(props["connector.class"])()
    assert isinstance(connector, SourceConnector)
    connector.start(props)
    [task_config] = connector.task_configs(1)
    task = connector.task_class()()
    task.initialize(SourceContext(reader))
    task.start({**props, **task_config})
    connector.stop()
    return task


def test_source_config_validates(registry: PluginRegistry, tmp_path: Path) -> None:
    props = {"name": "src", "connector.class": "FileStreamSource",
             "file": str(tmp_path / "in.txt"), "topic": "t"}
    assert validate_connector_config(registry, props).ok


def test_source_stop_is_safe_at_any_point(registry: PluginRegistry, tmp_path: Path) -> None:
    props = {"name": "src", "connector.class": "FileStreamSource",
             "file": str(tmp_path / "in.txt"), "topic": "t"}
    task = source_task(registry, props, DictOffsetReader())
    task.stop()
    task.stop()
    assert task.poll() == []


@pytest.mark.parametrize("seed", range(3))
def test_source_restarts_lose_and_double_nothing(
    registry: PluginRegistry, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "in.txt"
    path.write_text("")
    props = {"name": "src", "connector.class": "FileStreamSource", "file": str(path),
             "topic": "t", "batch.size": "7"}
    reader = DictOffsetReader()
    written: list[str] = []
    delivered: list[str] = []  # what the runtime acknowledged (and committed)
    for _round in range(6):
        more = [f"r{_round}-{i}-{'é' * rng.randint(0, 3)}" for i in range(rng.randint(0, 40))]
        with path.open("a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in more))
        written.extend(more)
        task = source_task(registry, props, reader)
        records = drain(task, len(written) - len(delivered), max_polls=50)
        acked = records[: rng.randint(0, len(records))]  # a crash before the rest was acked
        reader.commit(acked)
        delivered.extend(r.value for r in acked)
        task.stop()
    task = source_task(registry, props, reader)
    delivered.extend(r.value for r in drain(task, len(written) - len(delivered)))
    task.stop()
    assert delivered == written


def sink_task(registry: PluginRegistry, props: dict[str, str]):
    connector = registry.connector_class(props["connector.class"])()
    assert isinstance(connector, SinkConnector)
    connector.start(props)
    [task_config] = connector.task_configs(1)
    task = connector.task_class()()
    task.initialize(SinkContext({TopicPartition("t", 0)}))
    task.start({**props, **task_config})
    task.open([TopicPartition("t", 0)])
    return task


@pytest.mark.parametrize("seed", range(3))
def test_sink_output_holds_everything_committed(
    registry: PluginRegistry, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "out.txt"
    props = {"name": "sink", "connector.class": "FileStreamSink", "file": str(path),
             "topics": "t"}
    assert validate_connector_config(registry, props).ok
    values = [f"v{i}" for i in range(200)]
    partition = TopicPartition("t", 0)
    committed = 0  # next offset to read, as the consumer group stores it
    while committed < len(values):
        task = sink_task(registry, props)
        position = committed
        for _ in range(rng.randint(1, 4)):
            batch = values[position : position + rng.randint(1, 30)]
            task.put([SinkRecord(topic="t", partition=0, value=v, kafka_offset=position + i)
                      for i, v in enumerate(batch)])
            position += len(batch)
            if rng.random() < 0.5:
                committed = task.pre_commit({partition: position})[partition]
        if rng.random() < 0.5:  # a clean stop commits; otherwise the task "crashed"
            committed = task.pre_commit({partition: position})[partition]
            task.close([partition])
        task.stop()
    lines = path.read_text().splitlines()
    # At-least-once: every value is there, in order, possibly repeated after a crash.
    seen = iter(lines)
    assert all(any(line == v for line in seen) for v in values)
    assert set(lines) == set(values)
