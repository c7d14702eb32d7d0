"""ConfigTopicStore on a real broker: Kafka Connect's keys and values, the commit
rule for task configs, restarts, and bad records skipped."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator

import pytest

from connect_worker.states import TargetState
from connect_worker.storage.config_records import RestartRequest, SessionKey
from connect_worker.storage.config_topic import ConfigSnapshot, ConfigTopicStore
from connect_worker.storage.configs import StoredConnector
from harness.broker_process import BrokerProcess
from tests.integration.connect import topic_raw

CONFIG = {"connector.class": "FileStreamSource", "tasks.max": "2", "file": "/tmp/ü.txt"}
TASKS = [{"file": "/tmp/ü.txt", "task.id": "0"}, {"file": "/tmp/ü.txt", "task.id": "1"}]


@pytest.fixture
def make_store(broker: BrokerProcess, topic_name: str) -> Iterator[type[ConfigTopicStore]]:
    started: list[ConfigTopicStore] = []

    def make() -> ConfigTopicStore:
        store = ConfigTopicStore(
            topic_name, {"bootstrap.servers": broker.bootstrap}, replication_factor=1
        )
        store.start()
        started.append(store)
        return store

    yield make  # type: ignore[misc]
    for store in started:
        store.stop()


def populate(store: ConfigTopicStore) -> None:
    store.put_connector_config("files-src", CONFIG, TargetState.PAUSED)
    store.put_task_configs("files-src", TASKS)
    store.put_target_state("files-src", TargetState.STOPPED)
    store.put_session_key(SessionKey(b"\x00secret\xff", "HmacSHA256", 1700000000000))
    store.put_connector_config("other", {"connector.class": "X"})
    store.remove_connector_config("other")


def test_writes_are_kafka_connects_exact_keys_and_values(
    make_store: type[ConfigTopicStore], broker: BrokerProcess, topic_name: str
) -> None:
    populate(make_store())
    raw = topic_raw.read_all(broker.bootstrap, topic_name, 1)
    props = json.dumps(CONFIG, separators=(",", ":"), ensure_ascii=False)
    task0 = json.dumps(TASKS[0], separators=(",", ":"), ensure_ascii=False)
    task1 = json.dumps(TASKS[1], separators=(",", ":"), ensure_ascii=False)
    assert raw == [
        (0, b"target-state-files-src", b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (0, b"connector-files-src", b'{"properties":' + props.encode() + b"}"),
        (0, b"task-files-src-0", b'{"properties":' + task0.encode() + b"}"),
        (0, b"task-files-src-1", b'{"properties":' + task1.encode() + b"}"),
        (0, b"commit-files-src", b'{"tasks":2}'),
        (0, b"target-state-files-src", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (
            0,
            b"session-key",
            b'{"key":"AHNlY3JldP8=","algorithm":"HmacSHA256","creation-timestamp":1700000000000}',
        ),
        (0, b"connector-other", b'{"properties":{"connector.class":"X"}}'),
        (0, b"connector-other", None),
        (0, b"target-state-other", None),
    ]
    assert "ü".encode() in raw[1][2]  # type: ignore[operator]  # UTF-8, not \u escapes


def test_a_restarted_store_sees_the_same_state(make_store: type[ConfigTopicStore]) -> None:
    writer = make_store()
    populate(writer)
    written = writer.snapshot()
    assert written.connectors == {"files-src": CONFIG}
    assert written.tasks("files-src") == TASKS
    assert written.target_state("files-src") is TargetState.STOPPED
    assert written.session_key == SessionKey(b"\x00secret\xff", "HmacSHA256", 1700000000000)
    assert written.offset == 10
    writer.stop()
    restarted = make_store()
    assert restarted.snapshot() == written
    assert restarted.load() == [StoredConnector("files-src", CONFIG, TargetState.STOPPED)]


def test_task_configs_apply_only_once_their_commit_arrives(
    make_store: type[ConfigTopicStore], broker: BrokerProcess, topic_name: str
) -> None:
    store = make_store()
    store.put_connector_config("c", {"connector.class": "X"})
    store.put_task_configs("c", [{"n": "0"}])
    # A leader that died after writing one of two new task configs, as a Java worker writes them:
    topic_raw.write(broker.bootstrap, topic_name, [(b"task-c-0", b'{"properties":{"n":"new"}}')])
    store.refresh()
    assert store.snapshot().tasks("c") == [{"n": "0"}]  # deferred: no commit yet
    topic_raw.write(broker.bootstrap, topic_name, [(b"commit-c", b'{"tasks":2}')])
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot.inconsistent == {"c"}  # task 1 is missing: nothing applied
    assert snapshot.tasks("c") == []
    store.put_task_configs("c", [{"n": "a"}, {"n": "b"}])  # the herder re-publishes
    snapshot = store.snapshot()
    assert snapshot.inconsistent == frozenset()
    assert snapshot.tasks("c") == [{"n": "a"}, {"n": "b"}]


def test_bad_records_are_logged_and_skipped(
    make_store: type[ConfigTopicStore],
    broker: BrokerProcess,
    topic_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    make_store().stop()  # creates the topic, compacted
    topic_raw.write(
        broker.bootstrap,
        topic_name,
        [
            (b"connector-a", b'{"properties":{"connector.class":"A"}}'),
            (b"connector-torn", b'{"properties":{"connector.cl'),  # torn JSON
            (b"target-state-a", b'{"state":"SLEEPING"}'),
            (b"what-is-this", b"{}"),
            (b"task-a-x", b'{"properties":{}}'),
            (b"connector-b", b'{"properties":{"connector.class":"B"}}'),
            (b"target-state-b", b'{"state":"PAUSED"}'),  # a pre-KIP-875 worker's record
        ],
    )
    with caplog.at_level(logging.ERROR, logger="connect_worker.storage.config_topic"):
        snapshot = make_store().snapshot()
    assert snapshot.connectors == {
        "a": {"connector.class": "A"},
        "b": {"connector.class": "B"},
    }
    assert snapshot.target_states == {"a": TargetState.RUNNING, "b": TargetState.PAUSED}
    assert snapshot.offset == 7
    skipped = [r.getMessage() for r in caplog.records]
    assert len(skipped) == 4
    assert "offset 1" in skipped[0] and "not JSON" in skipped[0]
    assert "SLEEPING" in skipped[1]
    assert "what-is-this" in skipped[2]
    assert "task-a-x" in skipped[3]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.lock = threading.Lock()

    def _add(self, kind: str, what: object) -> None:
        with self.lock:
            self.events.append((kind, what))

    def on_connector_config_update(self, connector: str) -> None:
        self._add("config", connector)

    def on_connector_config_remove(self, connector: str) -> None:
        self._add("remove", connector)

    def on_task_config_update(self, tasks: list[tuple[str, int]]) -> None:
        self._add("tasks", tasks)

    def on_target_state_change(self, connector: str) -> None:
        self._add("state", connector)

    def on_session_key_update(self, key: SessionKey) -> None:
        self._add("key", key.algorithm)

    def on_restart_request(self, request: RestartRequest) -> None:
        self._add("restart", request)


def test_the_listener_hears_changes_made_by_other_workers(
    make_store: type[ConfigTopicStore],
) -> None:
    leader, follower = make_store(), make_store()
    heard = Recorder()
    follower.set_listener(heard)
    populate(leader)
    leader.put_restart_request(RestartRequest("files-src", include_tasks=True))
    follower.refresh()
    assert heard.events == [
        ("config", "files-src"),
        ("tasks", [("files-src", 0), ("files-src", 1)]),
        ("state", "files-src"),
        ("key", "HmacSHA256"),
        ("config", "other"),
        ("remove", "other"),
        ("restart", RestartRequest("files-src", include_tasks=True, only_failed=False)),
    ]
    assert isinstance(follower.snapshot(), ConfigSnapshot)
    assert follower.snapshot().connectors == leader.snapshot().connectors


def test_a_listener_that_writes_to_the_store_gets_a_clear_error_not_a_hang(
    make_store: type[ConfigTopicStore], caplog: pytest.LogCaptureFixture
) -> None:
    store = make_store()

    class Writer(Recorder):
        def on_connector_config_update(self, connector: str) -> None:
            store.put_target_state(connector, TargetState.PAUSED)

    store.set_listener(Writer())
    with caplog.at_level(logging.ERROR, logger="connect_worker.storage.config_topic"):
        store.put_connector_config("c", {"connector.class": "X"})
    assert store.snapshot().connectors == {"c": {"connector.class": "X"}}
    assert store.snapshot().target_states == {"c": TargetState.RUNNING}  # nothing half-written
    [failure] = caplog.records
    assert failure.exc_info is not None
    assert "own reader thread" in str(failure.exc_info[1])
