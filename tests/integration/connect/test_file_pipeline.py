"""FileStreamSource -> broker -> FileStreamSink through the StandaloneHerder."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State
from harness.wait import wait_for
from tests.integration.connect.helpers import task_state


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_file_source_to_file_sink_and_resume_after_restart(
    make_herder: Callable[..., StandaloneHerder], tmp_path: Path, topic_name: str
) -> None:
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(500)))
    herder = make_herder()
    herder.put_connector_config(
        "sink",
        {"connector.class": "FileStreamSink", "topics": topic_name, "file": str(sink)},
        allow_replace=False,
    )
    herder.put_connector_config(
        "src",
        {"connector.class": "FileStreamSource", "topic": topic_name, "file": str(source)},
        allow_replace=False,
    )
    wait_for(lambda: len(lines(sink)) >= 500, "the first 500 lines")
    assert task_state(herder, "src") is State.RUNNING
    assert herder.connector_topics("src") == [topic_name]
    assert herder.connector_topics("sink") == [topic_name]
    herder.stop()  # flushes the source's offsets and commits the sink's

    stored = json.loads((tmp_path / "connect.offsets").read_text())
    assert stored == {f'["src",{{"filename":"{source}"}}]': {"position": source.stat().st_size}}
    with source.open("a") as out:
        out.write("".join(f"line {i}\n" for i in range(500, 800)))

    again = make_herder()  # REST-created connectors come back from connectors.json
    assert again.connectors() == ["sink", "src"]
    wait_for(lambda: len(lines(sink)) >= 800, "the 300 new lines")
    assert lines(sink) == [f"line {i}" for i in range(800)]  # nothing lost, nothing doubled
    def own_offsets() -> list[dict[str, object]]:
        """The sink group's offsets in this test's topic (the session broker's group
        ``connect-sink`` may hold other tests' topics too)."""
        return [
            entry
            for entry in again.connector_offsets("sink")
            if entry["partition"]["kafka_topic"] == topic_name
        ]

    wait_for(
        lambda: own_offsets()
        == [
            {
                "partition": {"kafka_topic": topic_name, "kafka_partition": 0},
                "offset": {"kafka_offset": 800},
            }
        ],
        "the sink's committed offset",
    )
