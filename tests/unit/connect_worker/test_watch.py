"""The pipelines folder watcher against a herder, through real file-system events."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.states import State
from connect_worker.watch import PipelineWatcher, is_pipeline_file, read_pipeline_file
from connect_worker.worker_config import WorkerConfig
from harness.broker_process import BrokerProcess
from harness.wait import wait_for


class RecordingHerder:
    """Delegates to a real herder and records the watcher's calls into it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __getattr__(self, attribute: str) -> Any:
        target = getattr(self.inner, attribute)
        if attribute not in {"put_connector_config", "put_failed_connector", "delete_connector"}:
            return target

        def record(name: str, *args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.calls.append((attribute, name))
            return target(name, *args, **kwargs)

        return record

    def count(self, method: str, name: str) -> int:
        with self._lock:
            return self.calls.count((method, name))


def source_config(tmp_path: Path, topic: str, **extra: str) -> str:
    lines = [
        "connector.class=FileStreamSource",
        f"file={tmp_path / 'input.txt'}",
        f"topic={topic}",
        *(f"{key}={value}" for key, value in extra.items()),
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def herder(broker: BrokerProcess, tmp_path: Path) -> Iterator[StandaloneHerder]:
    """A real herder on the session broker; the watcher's calls are recorded around it."""
    config = WorkerConfig.from_properties(
        {
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "connector.configs.file": str(tmp_path / "connectors.json"),
        }
    )
    herder = StandaloneHerder(
        config, PluginRegistry.load(entry_points=False), bootstrap=broker.bootstrap
    )
    herder.start()
    yield herder
    herder.stop()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "pipelines"
    path.mkdir()
    (tmp_path / "input.txt").write_text("")
    return path


@pytest.fixture
def watch(folder: Path, herder: Any) -> Iterator[Callable[..., RecordingHerder]]:
    started: list[PipelineWatcher] = []

    def start(**options: Any) -> RecordingHerder:
        recording = RecordingHerder(herder)
        watcher = PipelineWatcher(folder, recording, **options)  # type: ignore[arg-type]
        watcher.start()
        started.append(watcher)
        return recording

    yield start
    for watcher in started:
        watcher.stop()


def state(herder: Any, name: str) -> str | None:
    if name not in herder.connectors():
        return None
    return str(herder.connector_status(name).state)


def trace(herder: Any, name: str) -> str:
    return herder.connector_status(name).trace or ""


def test_pipeline_file_names() -> None:
    assert is_pipeline_file(Path("a.properties"))
    for name in (
        "a.txt",
        ".#a.properties",
        "a.properties~",
        "a.properties.swp",
        ".a.properties",
        "a.properties.tmp",
        ".properties",
        "properties",
    ):
        assert not is_pipeline_file(Path(name)), name


def test_read_pipeline_file_names_and_problems(tmp_path: Path) -> None:
    plain = tmp_path / "orders.properties"
    plain.write_text("connector.class=FileStreamSource\n")
    assert read_pipeline_file(plain).name == "orders"
    named = tmp_path / "x.properties"
    named.write_text("name = billing\nconnector.class=FileStreamSink\n")
    assert (read_pipeline_file(named).name, read_pipeline_file(named).config["name"]) == (
        "billing",
        "billing",
    )
    missing = tmp_path / "m.properties"
    missing.write_text("tasks.max=1\n")
    assert "connector.class is missing" in read_pipeline_file(missing).problems[0]
    big = tmp_path / "big.properties"
    big.write_bytes(b"#" * 2000)
    assert "2000 bytes" in read_pipeline_file(big, max_bytes=1000).problems[0]


def test_loads_present_files_then_follows_create_edit_delete(
    folder: Path, tmp_path: Path, watch: Any, topic_name: str
) -> None:
    (folder / "first.properties").write_text(source_config(tmp_path, topic_name))
    (folder / "notes.txt").write_text("not a pipeline")
    herder = watch()
    assert state(herder, "first") is not None  # loaded before start() returned
    assert "notes" not in herder.connectors()

    (folder / "second.properties").write_text(source_config(tmp_path, topic_name))
    wait_for(lambda: state(herder, "second"), "the new file's connector")

    (folder / "second.properties").write_text(
        source_config(tmp_path, topic_name, **{"batch.size": "7"})
    )
    wait_for(
        lambda: herder.connector_config("second").get("batch.size") == "7", "the edited config"
    )
    (folder / "second.properties").unlink()
    wait_for(lambda: "second" not in herder.connectors(), "the deleted file's connector to go")
    assert state(herder, "first") is not None


def test_editor_saves_by_rename_and_bursts_are_debounced(
    folder: Path, tmp_path: Path, watch: Any, topic_name: str
) -> None:
    herder = watch(debounce_s=0.3)
    temporary = folder / ".saved.properties.swp"
    temporary.write_text(source_config(tmp_path, topic_name))
    os.replace(temporary, folder / "saved.properties")  # write a temporary, rename into place
    wait_for(lambda: state(herder, "saved"), "the renamed-into-place file")

    # vim's dance: move the old file away, write the new one, delete the backup
    target = folder / "saved.properties"
    os.replace(target, folder / "saved.properties~")
    target.write_text(source_config(tmp_path, topic_name, **{"batch.size": "9"}))
    (folder / "saved.properties~").unlink()
    wait_for(lambda: herder.connector_config("saved").get("batch.size") == "9", "the new config")
    assert herder.count("delete_connector", "saved") == 0

    # a slow writer: pieces 50 ms apart are one change, read once complete
    text = source_config(tmp_path, topic_name, **{"batch.size": "11"})
    with open(folder / "slow.properties", "w") as out:
        for piece in (text[:10], text[10:30], text[30:]):
            out.write(piece)
            out.flush()
            time.sleep(0.05)
    wait_for(lambda: state(herder, "slow"), "the slowly written file")
    time.sleep(0.5)
    assert herder.count("put_connector_config", "slow") == 1
    assert herder.count("put_failed_connector", "slow") == 0

    # saving the same content again changes nothing
    before = herder.count("put_connector_config", "saved")
    target.write_text(target.read_text())
    time.sleep(0.8)
    assert herder.count("put_connector_config", "saved") == before


def test_broken_files_fail_alone(folder: Path, tmp_path: Path, watch: Any, topic_name: str) -> None:
    (folder / "good.properties").write_text(source_config(tmp_path, topic_name))
    herder = watch(max_file_bytes=4096)
    broken = {
        "no-class": "tasks.max=1\n",
        "unknown-class": "connector.class=NoSuchConnector\n",
        "bad-tasks": source_config(tmp_path, topic_name, **{"tasks.max": "abc"}),
        "continued": "connector.class=FileStreamSource\nfile=/tmp/x \\",
        "binary": bytes(range(256)) * 4,
        "huge": b"# padding\n" * 1000,
    }
    for name, content in broken.items():
        path = folder / f"{name}.properties"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    expected = {
        "no-class": "connector.class is missing",
        "unknown-class": "NoSuchConnector",
        "bad-tasks": "tasks.max",
        "continued": "line continuation",
        "binary": "binary data",
        "huge": "limited to 4096 bytes",
    }
    for name, words in expected.items():
        wait_for(lambda n=name: state(herder, n) == State.FAILED, f"{name} to be FAILED")
        assert words in trace(herder, name), (name, trace(herder, name))
        assert f"{name}.properties" in trace(herder, name)
    assert state(herder, "good") != State.FAILED

    (folder / "no-class.properties").write_text(source_config(tmp_path, topic_name))
    wait_for(lambda: state(herder, "no-class") not in (None, State.FAILED), "the fixed file")
    (folder / "binary.properties").unlink()
    wait_for(lambda: "binary" not in herder.connectors(), "the broken file's placeholder to go")


def test_renamed_connector_and_duplicate_names(
    folder: Path, tmp_path: Path, watch: Any, topic_name: str
) -> None:
    herder = watch()
    first = folder / "a.properties"
    first.write_text("name=shared\n" + source_config(tmp_path, topic_name))
    wait_for(lambda: state(herder, "shared"), "the named connector")
    (folder / "b.properties").write_text("name=shared\n" + source_config(tmp_path, topic_name))
    wait_for(
        lambda: state(herder, "b") == State.FAILED, "the duplicate to fail under its file name"
    )
    assert "already used" in trace(herder, "b")

    first.write_text("name=renamed\n" + source_config(tmp_path, topic_name))
    wait_for(lambda: state(herder, "renamed"), "the connector under its new name")
    wait_for(lambda: "shared" not in herder.connectors(), "the old name to go")


def test_links_out_of_the_folder_and_bad_names_are_refused(
    folder: Path, tmp_path: Path, watch: Any, topic_name: str, caplog: Any
) -> None:
    outside = tmp_path / "outside.properties"
    outside.write_text(source_config(tmp_path, topic_name) + "secret=value-from-outside\n")
    (folder / "inside.properties").write_text(source_config(tmp_path, topic_name))
    (folder / "passwd.properties").symlink_to("/etc/passwd")
    (folder / "escape.properties").symlink_to(outside)
    (folder / "alias.properties").symlink_to(folder / "inside.properties")
    (folder / "slashed.properties").write_text(
        source_config(tmp_path, topic_name, name="../../evil")
    )
    (folder / "bad\x01file.properties").write_text(source_config(tmp_path, topic_name))
    herder = watch()
    for name, target in (("passwd", "/etc/passwd"), ("escape", str(outside))):
        wait_for(lambda n=name: state(herder, n) == State.FAILED, f"{name} to be FAILED")
        assert f"{name}.properties" in trace(herder, name)
        assert f"symbolic link to {target}" in trace(herder, name)
        config = herder.connector_config(name)
        assert "root" not in str(config) and "value-from-outside" not in str(config)
    wait_for(lambda: state(herder, "alias") not in (None, State.FAILED), "a link inside to work")
    wait_for(lambda: state(herder, "slashed") == State.FAILED, "a bad name to fail")
    assert "Invalid connector name '../../evil'" in trace(herder, "slashed")
    assert not any("evil" in name or "\x01" in name for name in herder.connectors())
    assert "control character" in caplog.text
