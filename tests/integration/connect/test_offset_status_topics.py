"""TopicOffsetStore and TopicStatusStore on a real broker: Kafka Connect's keys,
values and partitioning, restarts, and the status generation rule."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_worker.states import State
from connect_worker.storage.offset_topic import TopicOffsetStore
from connect_worker.storage.offsets import partition_key
from connect_worker.storage.status import StateRecord
from connect_worker.storage.status_topic import TopicStatusStore
from harness.broker_process import BrokerProcess
from tests.integration.connect import topic_raw

PARTITIONS = 25
FILE_A = {"filename": "/var/log/a.log"}
FILE_B = {"filename": "/var/log/b.log", "host": "h1"}


@pytest.fixture
def offsets(broker: BrokerProcess, topic_name: str) -> Iterator[Callable[[], TopicOffsetStore]]:
    started: list[TopicOffsetStore] = []

    def make() -> TopicOffsetStore:
        store = TopicOffsetStore(
            topic_name,
            {"bootstrap.servers": broker.bootstrap},
            partitions=PARTITIONS,
            replication_factor=1,
        )
        store.start()
        started.append(store)
        return store

    yield make
    for store in started:
        store.stop()


@pytest.fixture
def statuses(broker: BrokerProcess, topic_name: str) -> Iterator[Callable[[], TopicStatusStore]]:
    started: list[TopicStatusStore] = []

    def make() -> TopicStatusStore:
        store = TopicStatusStore(
            topic_name, {"bootstrap.servers": broker.bootstrap}, replication_factor=1
        )
        store.load()
        started.append(store)
        return store

    yield make
    for store in started:
        store.stop()


def test_offsets_are_kafka_connects_keys_values_and_partitions(
    offsets: Callable[[], TopicOffsetStore], broker: BrokerProcess, topic_name: str
) -> None:
    store = offsets()
    store.put_all("tail", {partition_key(FILE_A): {"position": 10}})
    store.put_all("tail", {partition_key(FILE_B): {"position": 7, "inode": 3}})
    store.put_all("tail", {partition_key(FILE_A): None})
    store.flush()
    raw = topic_raw.read_all(broker.bootstrap, topic_name, PARTITIONS)
    key_a = b'["tail",{"filename":"/var/log/a.log"}]'
    key_b = b'["tail",{"filename":"/var/log/b.log","host":"h1"}]'
    assert sorted(((k, v) for _, k, v in raw), key=repr) == sorted(
        [
            (key_a, b'{"position":10}'),
            (key_b, b'{"position":7,"inode":3}'),
            (key_a, None),
        ],
        key=repr,
    )
    # librdkafka's Java-compatible murmur2 partitioner puts the same keys where we did
    java_partitions = topic_raw.write(
        broker.bootstrap, topic_name, [(key_a, b'{"position":11}'), (key_b, None)]
    )
    ours = {k: p for p, k, _ in raw}
    assert java_partitions == [ours[key_a], ours[key_b]]
    assert len(set(ours.values())) == 2  # spread by key, not all on one partition

    assert store.get_all("tail") == {partition_key(FILE_A): {"position": 11}}
    assert store.get("tail", FILE_B) is None


def test_a_restarted_offset_store_and_another_worker_see_the_same_offsets(
    offsets: Callable[[], TopicOffsetStore],
) -> None:
    first = offsets()
    first.put_all("tail", {partition_key(FILE_A): {"position": 1}})
    first.put_all("tail", {partition_key(FILE_B): {"position": 2}})
    first.put_all("other", {partition_key(FILE_A): {"position": 3}})
    first.flush()
    second = offsets()
    assert second.get("tail", {"filename": "/var/log/a.log"}) == {"position": 1}
    assert second.get_all("tail") == first.get_all("tail")
    first.put_all("tail", {partition_key(FILE_A): {"position": 99}})
    first.flush()
    assert second.get("tail", FILE_A) == {"position": 99}  # get reads to the end first
    first.stop()
    assert offsets().get_all("other") == {partition_key(FILE_A): {"position": 3}}


def test_bad_offset_records_are_skipped(
    offsets: Callable[[], TopicOffsetStore],
    broker: BrokerProcess,
    topic_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    offsets().stop()
    good = json.dumps(["tail", FILE_A], separators=(",", ":")).encode()
    topic_raw.write(
        broker.bootstrap,
        topic_name,
        [(b'["tail",{"filename":', b"{}"), (b'"tail"', b"{}"), (good, b'{"position":5}')],
    )
    with caplog.at_level(logging.ERROR, logger="connect_worker.storage.offset_topic"):
        assert offsets().get("tail", FILE_A) == {"position": 5}
    assert len(caplog.records) == 2


def status_values(raw: list[Any]) -> dict[bytes, bytes | None]:
    last: dict[bytes, bytes | None] = {}
    for _partition, key, value in raw:
        last[key] = value
    return last


def test_statuses_are_kafka_connects_keys_and_values(
    statuses: Callable[[], TopicStatusStore], broker: BrokerProcess, topic_name: str
) -> None:
    store = statuses()
    store.put_connector("files-src", StateRecord(State.RUNNING, "10.0.0.5:8083", None, 7))
    store.put_task("files-src", 0, StateRecord(State.FAILED, "10.0.0.6:8083", "Trace\n  at", 7))
    store.put_task("files-src", 1, StateRecord(State.RUNNING, "10.0.0.6:8083", None, 7))
    store.remove_task("files-src", 1)
    store.put_topic("files-src", "orders", task=0)
    store.put_topic("files-src", "returns")
    store.reset_topics("files-src")
    store.put_topic("files-src", "orders")
    store.flush()
    raw = topic_raw.read_all(broker.bootstrap, topic_name, 5)
    last = status_values(raw)
    assert last[b"status-connector-files-src"] == (
        b'{"state":"RUNNING","trace":null,"worker_id":"10.0.0.5:8083","generation":7}'
    )
    assert last[b"status-task-files-src-0"] == (
        b'{"state":"FAILED","trace":"Trace\\n  at","worker_id":"10.0.0.6:8083","generation":7}'
    )
    assert last[b"status-task-files-src-1"] is None
    assert last[b"status-topic-returns:connector-files-src"] is None
    orders = json.loads(last[b"status-topic-orders:connector-files-src"] or b"")
    assert list(orders) == ["topic"]
    assert list(orders["topic"]) == ["name", "connector", "task", "discoverTimestamp"]
    assert orders["topic"]["name"] == "orders" and orders["topic"]["connector"] == "files-src"
    assert len({p for p, _, _ in raw}) > 1  # keys spread over the 5 partitions

    restarted = statuses()
    assert restarted.connector("files-src") == store.connector("files-src")
    assert restarted.tasks("files-src") == {
        0: StateRecord(State.FAILED, "10.0.0.6:8083", "Trace\n  at", 7)
    }
    assert restarted.topics("files-src") == {"orders"}


def test_a_status_of_an_older_generation_does_not_overwrite_a_newer_one(
    statuses: Callable[[], TopicStatusStore],
) -> None:
    zombie, owner = statuses(), statuses()
    zombie.put_task("c", 0, StateRecord(State.RUNNING, "zombie:8083", None, 3))
    zombie.flush()
    owner.refresh()
    owner.put_task("c", 0, StateRecord(State.RUNNING, "owner:8083", None, 4))  # rebalanced to it
    owner.flush()
    zombie.refresh()
    # The zombie wakes up and reports its task stopping: refused, the owner's status stays.
    assert not zombie.put_task_safe("c", 0, StateRecord(State.UNASSIGNED, "zombie:8083", None, 3))
    # The owner itself may always write; a newer generation may always write.
    assert owner.put_task_safe("c", 0, StateRecord(State.FAILED, "owner:8083", "t", 4))
    assert zombie.put_connector_safe("c", StateRecord(State.RUNNING, "zombie:8083", None, 5))
    zombie.flush()
    owner.flush()
    assert statuses().tasks("c") == {0: StateRecord(State.FAILED, "owner:8083", "t", 4)}


def test_bad_status_records_are_skipped(
    statuses: Callable[[], TopicStatusStore],
    broker: BrokerProcess,
    topic_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    statuses().stop()
    topic_raw.write(
        broker.bootstrap,
        topic_name,
        [
            (b"status-connector-a", b'{"state":"RUNN'),
            (b"status-connector-b", b'{"state":"ASLEEP","worker_id":"w","generation":1}'),
            (b"status-task-a", b'{"state":"RUNNING","worker_id":"w","generation":1}'),
            (b"status-connector-c", b'{"state":"PAUSED","worker_id":"w","generation":2}'),
        ],
    )
    with caplog.at_level(logging.ERROR, logger="connect_worker.storage.status_topic"):
        store = statuses()
    assert store.connectors() == ["c"]
    assert store.connector("c") == StateRecord(State.PAUSED, "w", None, 2)
    assert len(caplog.records) == 3
