"""REST writes to a connector a pipeline file defines: 409 naming the file (issue 14, item 3).

A real herder, a real folder watcher and the REST app over both. The file is
the connector's source of truth, so a REST change that the file would undo at
its next edit is refused; state changes (pause, stop, restart, offsets) are not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.rest import create_app
from connect_worker.watch import PipelineWatcher
from harness.wait import wait_for

STRING = "org.apache.kafka.connect.storage.StringConverter"


@pytest.fixture
def pipelines(tmp_path: Path) -> Path:
    folder = tmp_path / "pipelines"
    folder.mkdir()
    return folder


@pytest.fixture
def watcher(herder: StandaloneHerder, pipelines: Path) -> Iterator[PipelineWatcher]:
    watcher = PipelineWatcher(pipelines, herder, debounce_s=0.05)
    yield watcher
    watcher.stop()


@pytest.fixture
def files_client(
    herder: StandaloneHerder, registry: PluginRegistry, watcher: PipelineWatcher
) -> Iterator[TestClient]:
    app = create_app(herder, registry, pipeline_files=watcher.pipeline_file)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def write_pipeline(pipelines: Path, tmp_path: Path, topic: str) -> tuple[Path, dict[str, str]]:
    config = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": topic,
        "value.converter": STRING,
    }
    (tmp_path / "in.txt").write_text("a\n")
    path = pipelines / "from-file.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in config.items()))
    return path, {**config, "name": "from-file"}


@pytest.fixture
def watched(
    watcher: PipelineWatcher, pipelines: Path, tmp_path: Path, topic_name: str
) -> tuple[Path, dict[str, str]]:
    """The pipeline file ``from-file.properties``, watched: (its path, its config)."""
    path, config = write_pipeline(pipelines, tmp_path, topic_name)
    watcher.start()
    return path, config


def assert_conflict(response: object, path: Path) -> str:
    status = getattr(response, "status_code", None)
    body = getattr(response, "json", dict)()
    assert status == 409, (status, body)
    assert set(body) == {"error_code", "message"} and body["error_code"] == 409
    assert str(path) in body["message"] and "Edit or delete" in body["message"], body
    return str(body["message"])


def test_rest_writes_to_a_file_connector_are_refused(
    files_client: TestClient,
    watcher: PipelineWatcher,
    herder: StandaloneHerder,
    watched: tuple[Path, dict[str, str]],
    tmp_path: Path,
    topic_name: str,
) -> None:
    path, config = watched
    text = path.read_text()

    changed = files_client.put("/connectors/from-file/config", json={**config, "batch.size": 7})
    assert "change the config of connector from-file" in assert_conflict(changed, path)
    patched = files_client.patch("/connectors/from-file/config", json={"batch.size": 7})
    assert_conflict(patched, path)
    removed_key = files_client.patch("/connectors/from-file/config", json={"value.converter": None})
    assert_conflict(removed_key, path)
    assert "delete connector" in assert_conflict(files_client.delete("/connectors/from-file"), path)
    created = files_client.post("/connectors", json={"name": "from-file", "config": config})
    assert "create connector" in assert_conflict(created, path)

    assert path.read_text() == text
    assert herder.connectors() == ["from-file"]
    assert "batch.size" not in herder.connector_config("from-file")


def test_unchanged_config_and_state_changes_are_allowed(
    files_client: TestClient,
    watcher: PipelineWatcher,
    herder: StandaloneHerder,
    watched: tuple[Path, dict[str, str]],
    tmp_path: Path,
    topic_name: str,
) -> None:
    _, config = watched

    same = files_client.put("/connectors/from-file/config", json=config)
    assert same.status_code == 200, same.text
    assert same.json()["config"]["topic"] == topic_name
    same_patch = files_client.patch("/connectors/from-file/config", json={"topic": topic_name})
    assert same_patch.status_code == 200, same_patch.text
    stored = tmp_path / "connectors.json"  # REST's configs (conftest): the file's is not there
    assert not stored.exists() or "from-file" not in stored.read_text()

    assert files_client.put("/connectors/from-file/pause").status_code == 202
    assert files_client.put("/connectors/from-file/resume").status_code == 202
    assert files_client.post("/connectors/from-file/restart").status_code == 204
    assert files_client.put("/connectors/from-file/stop").status_code == 204
    offsets = files_client.get("/connectors/from-file/offsets")
    assert offsets.status_code == 200, offsets.text
    assert files_client.delete("/connectors/from-file/offsets").status_code == 200


def test_rest_owns_the_name_again_once_the_file_is_gone(
    files_client: TestClient,
    watcher: PipelineWatcher,
    herder: StandaloneHerder,
    watched: tuple[Path, dict[str, str]],
    tmp_path: Path,
    topic_name: str,
) -> None:
    path, config = watched
    path.unlink()
    wait_for(lambda: watcher.pipeline_file("from-file") is None, "the watcher forgets the file")
    wait_for(lambda: herder.connectors() == [], "the file's connector is deleted")
    created = files_client.post("/connectors", json={"name": "from-file", "config": config})
    assert created.status_code == 201, created.text
    replaced = files_client.put("/connectors/from-file/config", json={**config, "batch.size": 7})
    assert replaced.status_code == 200, replaced.text
    assert files_client.delete("/connectors/from-file").status_code == 204
