"""Offset and config stores: canonical keys, deletes, atomic files, corruption."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from connect_worker.states import TargetState
from connect_worker.storage import (
    ConfigStoreError,
    FileConfigStore,
    FileOffsetStore,
    MemoryOffsetStore,
    OffsetStoreError,
    StoredConnector,
    partition_key,
)


def test_partition_key_is_canonical() -> None:
    assert partition_key({"b": 1, "a": "x"}) == partition_key({"a": "x", "b": 1})
    assert partition_key({"a": "x"}) == '{"a":"x"}'


def test_memory_store_put_get_delete() -> None:
    store = MemoryOffsetStore()
    key = partition_key({"file": "/a"})
    store.put_all("c", {key: {"position": 10}})
    assert store.get("c", {"file": "/a"}) == {"position": 10}
    assert store.get("other", {"file": "/a"}) is None
    assert store.get_all("c") == {key: {"position": 10}}
    store.put_all("c", {key: None})
    assert store.get("c", {"file": "/a"}) is None
    assert store.get_all("c") == {}


def test_memory_store_returns_copies() -> None:
    store = MemoryOffsetStore()
    store.put_all("c", {partition_key({"p": 1}): {"n": 1}})
    got = store.get("c", {"p": 1})
    assert got is not None
    got["n"] = 99
    assert store.get("c", {"p": 1}) == {"n": 1}


def test_file_store_survives_reopen_with_kafka_keys(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "connect.offsets"
    store = FileOffsetStore(path)
    store.put_all("tail", {partition_key({"filename": "/var/log/x"}): {"position": 42}})
    assert not path.exists()  # nothing durable before flush
    store.flush()
    raw = json.loads(path.read_text())
    assert raw == {'["tail",{"filename":"/var/log/x"}]': {"position": 42}}
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    again = FileOffsetStore(path)
    assert again.get("tail", {"filename": "/var/log/x"}) == {"position": 42}


def test_file_store_reads_keys_in_any_order_and_spacing(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    path.write_text(json.dumps({'["c", {"b": 2, "a": 1}]': {"n": 5}}))
    assert FileOffsetStore(path).get("c", {"a": 1, "b": 2}) == {"n": 5}


def test_file_store_flush_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "offsets"
    store = FileOffsetStore(path)
    store.put_all("c", {partition_key({"p": 0}): {"n": 1}})
    store.flush()
    store.put_all("c", {partition_key({"p": 0}): {"n": 2}})

    def crash(src: str, dst: str) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        store.flush()
    monkeypatch.undo()
    assert FileOffsetStore(path).get("c", {"p": 0}) == {"n": 1}  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["offsets"]  # no temp file left
    store.flush()  # still dirty: the failed flush is retried
    assert FileOffsetStore(path).get("c", {"p": 0}) == {"n": 2}


@pytest.mark.parametrize(
    "content",
    ["not json", "[1, 2]", json.dumps({"no-json-key": {}}), json.dumps({'["c", 5]': {}})],
)
def test_file_store_names_a_corrupt_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "offsets"
    path.write_text(content)
    with pytest.raises(OffsetStoreError, match="offsets"):
        FileOffsetStore(path)


def test_config_store_persists_only_rest_connectors(tmp_path: Path) -> None:
    path = tmp_path / "connectors.json"
    store = FileConfigStore(path)
    assert store.load() == []
    store.put(StoredConnector("a", {"connector.class": "X"}, TargetState.PAUSED, "rest"))
    store.put(StoredConnector("b", {"connector.class": "Y"}, TargetState.RUNNING, "file"))
    loaded = FileConfigStore(path).load()
    assert loaded == [StoredConnector("a", {"connector.class": "X"}, TargetState.PAUSED, "rest")]
    # a pipeline file taking over a REST connector's name removes it from the file
    store.put(StoredConnector("a", {"connector.class": "X"}, TargetState.RUNNING, "file"))
    assert FileConfigStore(path).load() == []


def test_config_store_remove_and_corruption(tmp_path: Path) -> None:
    path = tmp_path / "connectors.json"
    store = FileConfigStore(path)
    store.put(StoredConnector("a", {"k": "v"}))
    store.remove("a")
    store.remove("missing")
    assert FileConfigStore(path).load() == []
    path.write_text('{"version": 1, "connectors": {"a": {"target_state": "RUNNING"}}}')
    with pytest.raises(ConfigStoreError, match="'a'"):
        FileConfigStore(path).load()
