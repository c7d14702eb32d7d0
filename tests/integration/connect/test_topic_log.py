"""TopicLog against a real broker process: topic creation and checks, read to end, follow.

Also one round trip on Tansu, a Kafka-compatible broker that is not ours.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import pytest

from connect_worker.storage.topic_log import TopicLog, TopicSettings, TopicStoreError
from harness.broker_process import BrokerProcess
from harness.tansu import TansuProcess
from log_engine.client import ConfigResource, ConsumerRecord, SyncAdmin


class Collected:
    """A ``consumed`` callback that keeps (key, value) pairs."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[tuple[bytes | None, bytes | None]] = []

    def __call__(self, record: ConsumerRecord) -> None:
        with self.lock:
            self.records.append((record.key, record.value))

    def items(self) -> list[tuple[bytes | None, bytes | None]]:
        with self.lock:
            return list(self.records)


def settings(topic: str, **kw: object) -> TopicSettings:
    base: dict[str, object] = {
        "name": topic,
        "setting": "config.storage.topic",
        "purpose": "connector configurations",
        "partitions": 1,
        "replication_factor": 1,
    }
    base.update(kw)
    return TopicSettings(**base)  # type: ignore[arg-type]


def round_trip(bootstrap: str, topic: str, partitions: int) -> None:
    """Write through one log, read through a second started later and a third restarted."""
    first_seen = Collected()
    first = TopicLog(settings(topic, partitions=partitions), {"bootstrap.servers": bootstrap},
                     first_seen)
    first.start()
    try:
        for i in range(20):
            first.send(b"k%d" % (i % 7), b"v%d" % i)
        first.send(b"k0", None)
        first.flush()
        first.read_to_end()
        assert len(first_seen.items()) == 21  # its own writes come back

        second_seen = Collected()
        second = TopicLog(settings(topic, partitions=partitions),
                          {"bootstrap.servers": bootstrap}, second_seen)
        second.start()  # returns only once everything written so far was read
        try:
            assert sorted(second_seen.items(), key=repr) == sorted(first_seen.items(), key=repr)
            first.send(b"late", b"after-start")
            first.flush()
            second.read_to_end()  # follows what others write
            assert (b"late", b"after-start") in second_seen.items()
        finally:
            second.stop()
    finally:
        first.stop()


def test_a_started_log_has_read_everything_and_follows_new_writes(
    broker: BrokerProcess, topic_name: str
) -> None:
    round_trip(broker.bootstrap, topic_name, partitions=3)


def test_the_topic_is_created_compacted_with_the_configured_partitions(
    broker: BrokerProcess, topic_name: str
) -> None:
    log = TopicLog(settings(topic_name, partitions=5, setting="status.storage.topic"),
                   {"bootstrap.servers": broker.bootstrap}, Collected())
    log.start()
    try:
        assert len(log.partitions) == 5
    finally:
        log.stop()
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        resource = ConfigResource("topic", topic_name)
        configs = admin.describe_configs([resource])[resource]
        assert configs["cleanup.policy"].value == "compact"
        assert len(admin.describe_topics([topic_name])[topic_name].partitions) == 5


def test_an_existing_topic_that_is_not_compacted_is_refused_with_the_setting_named(
    broker: BrokerProcess, topic_name: str
) -> None:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic_name, 1, 1, {"cleanup.policy": "delete"})
    log = TopicLog(settings(topic_name), {"bootstrap.servers": broker.bootstrap}, Collected())
    with pytest.raises(TopicStoreError) as caught:
        log.start()
    message = str(caught.value)
    assert "config.storage.topic" in message
    assert "cleanup.policy=compact" in message
    assert "cleanup.policy=delete" in message


def test_a_config_topic_with_two_partitions_is_refused(
    broker: BrokerProcess, topic_name: str
) -> None:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic_name, 2, 1, {"cleanup.policy": "compact"})
    log = TopicLog(settings(topic_name, partitions_required=1),
                   {"bootstrap.servers": broker.bootstrap}, Collected())
    with pytest.raises(TopicStoreError, match=r"required to have 1 partition.*has 2"):
        log.start()


def test_a_handler_that_raises_skips_its_record_only(
    broker: BrokerProcess, topic_name: str
) -> None:
    seen: list[bytes | None] = []

    def handler(record: ConsumerRecord) -> None:
        if record.value == b"boom":
            raise ValueError("bad record")
        seen.append(record.value)

    log = TopicLog(settings(topic_name), {"bootstrap.servers": broker.bootstrap}, handler)
    log.start()
    try:
        for value in (b"a", b"boom", b"b"):
            log.send(b"k", value)
        log.flush()
        log.read_to_end()
        assert seen == [b"a", b"b"]
    finally:
        log.stop()


def test_round_trip_on_tansu(tansu: TansuProcess, topic_name: str) -> None:
    round_trip(tansu.bootstrap, topic_name, partitions=2)


def test_the_log_keeps_following_across_a_broker_crash(
    fresh_broker: Callable[..., BrokerProcess], topic_name: str
) -> None:
    broker = fresh_broker()
    seen = Collected()
    follower = TopicLog(settings(topic_name, partitions=2), {"bootstrap.servers": broker.bootstrap},
                        seen)
    follower.start()
    try:
        follower.send(b"before", b"1")
        follower.flush()
        broker.stop(signal.SIGKILL)
        broker.start()  # same port, same data
        writer = TopicLog(settings(topic_name, partitions=2),
                          {"bootstrap.servers": broker.bootstrap}, Collected())
        writer.start()
        try:
            writer.send(b"after", b"2")
            writer.flush()
        finally:
            writer.stop()
        follower.read_to_end()
        assert seen.items() == [(b"before", b"1"), (b"after", b"2")]
    finally:
        follower.stop()
