"""FileStatusStore: active topics kept in a file across restarts; states are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.states import State
from connect_worker.storage.status import FileStatusStore, StateRecord, StatusStoreError
from connect_worker.worker_config import WorkerConfig


def _store(path: Path) -> FileStatusStore:
    store = FileStatusStore(path)
    store.load()
    return store


def test_topics_survive_and_states_do_not(tmp_path: Path) -> None:
    path = tmp_path / "connect.status"
    store = _store(path)
    store.put_connector("c", StateRecord(State.RUNNING, "w"))
    store.put_topic("c", "b")
    store.put_topic("c", "a")
    store.put_topic("d", "x")
    store.remove_connector("c")  # a restart of the connector keeps its topics
    assert store.topics("c") == {"a", "b"}
    again = _store(path)
    assert again.topics("c") == {"a", "b"} and again.topics("d") == {"x"}
    assert again.connector("c") is None
    again.reset_topics("c")
    assert _store(path).topics("c") == set() and _store(path).topics("d") == {"x"}


def test_a_known_topic_does_not_rewrite_the_file(tmp_path: Path) -> None:
    path = tmp_path / "connect.status"
    store = _store(path)
    store.put_topic("c", "a")
    inode = path.stat().st_ino  # a rewrite renames a new file into place: a new inode
    store.put_topic("c", "a")
    assert path.stat().st_ino == inode
    store.put_topic("c", "b")
    assert path.stat().st_ino != inode


@pytest.mark.parametrize("content", ["{not json", '{"topics": {"c": "a"}}', "[]"])
def test_an_unreadable_file_is_a_clear_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "connect.status"
    path.write_text(content)
    with pytest.raises(StatusStoreError, match=str(path)):
        _store(path)
    assert path.read_text() == content  # nothing lost


def test_the_default_file_sits_beside_the_offsets() -> None:
    config = WorkerConfig.from_properties({"offset.storage.file.filename": "/x/y/connect.offsets"})
    assert config.status_file == Path("/x/y/connect.status")
    named = WorkerConfig.from_properties({"status.storage.file.filename": "/s/status.json"})
    assert named.status_file == Path("/s/status.json")
