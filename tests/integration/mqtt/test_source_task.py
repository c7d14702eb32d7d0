"""MqttSourceTask against a real Mosquitto: wildcards, headers, flow control, sessions."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connectors.api import SourceRecord
from connectors.mqtt.source import MqttSourceTask
from harness.mosquitto import MosquittoServer
from harness.wait import WAIT_S, wait_for
from tests.integration.mqtt.helpers import publish_all


def source_tasks(uri: str) -> Iterator[Callable[..., MqttSourceTask]]:
    """For a fixture to yield from: a starter of connected MqttSourceTasks on ``uri``
    (``start(topics, **props)``, a fresh client id unless given); all stopped after."""
    tasks: list[MqttSourceTask] = []

    def start(topics: str, **props: str) -> MqttSourceTask:
        task = MqttSourceTask()
        task.start(
            {
                "name": "src",
                "mqtt.server.uri": uri,
                "mqtt.topics": topics,
                "kafka.topic": "log-topic",
                "mqtt.client.id": f"src-{uuid.uuid4().hex[:10]}",
                **props,
            }
        )
        tasks.append(task)
        wait_for(lambda: task.details()["connection"] == "connected", "the source connected")
        return task

    yield start
    for task in tasks:
        task.stop()


@pytest.fixture
def start_source(mosquitto: MosquittoServer) -> Iterator[Callable[..., MqttSourceTask]]:
    """Start MqttSourceTasks (connected) on the session's Mosquitto; stopped at the end."""
    yield from source_tasks(mosquitto.uri)


def drain(task: MqttSourceTask, count: int, *, ack: bool = True) -> list[SourceRecord]:
    """Poll until ``count`` records came; acknowledge them as the runtime would."""
    records: list[SourceRecord] = []
    deadline = time.monotonic() + WAIT_S
    while len(records) < count:
        assert time.monotonic() < deadline, f"timed out waiting for {count} records"
        batch = task.poll()  # waits up to 0.5 s when nothing is buffered
        records.extend(batch)
        if ack:
            for record in batch:
                task.commit_record(record)
    return records


def test_wildcard_subscriptions_select_topics_and_records_carry_key_value_headers(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    p = mqtt_prefix
    publish_all(mosquitto, [(f"{p}/alarms/old", b"retained")], retain=True)
    task = start_source(f"{p}/+/temp,{p}/alarms/#")
    publish_all(
        mosquitto,
        [
            (f"{p}/kitchen/temp", b"21.5"),
            (f"{p}/kitchen/humidity", b"ignored: no filter matches"),
            (f"{p}/garage/temp", "7"),
            (f"{p}/alarms/door/front", b"\x00\xffbinary"),
        ],
    )
    records = drain(task, 4)
    by_key = {r.key: r for r in records}
    assert set(by_key) == {
        f"{p}/alarms/old", f"{p}/kitchen/temp", f"{p}/garage/temp", f"{p}/alarms/door/front"
    }
    assert by_key[f"{p}/kitchen/temp"].value == b"21.5"
    assert by_key[f"{p}/alarms/door/front"].value == b"\x00\xffbinary"
    retained = by_key[f"{p}/alarms/old"]
    assert retained.header("mqtt.retained") is True
    fresh = by_key[f"{p}/garage/temp"]
    assert (fresh.header("mqtt.qos"), fresh.header("mqtt.retained")) == (1, False)
    assert fresh.header("mqtt.duplicate") is False
    assert all(r.topic == "log-topic" for r in records)
    assert fresh.source_partition == {"mqtt.topic": f"{p}/garage/temp"}
    assert task.details()["messages.acked"] == 4
    assert task.poll() == []  # the humidity message matched no filter


def test_mqtt5_user_properties_become_headers(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    task = start_source(f"{mqtt_prefix}/#", **{"mqtt.version": "5"})
    publish_all(
        mosquitto,
        [(f"{mqtt_prefix}/dev1", b"on")],
        version="5",
        user_properties=[("site", "berlin"), ("unit", "kW")],
    )
    [record] = drain(task, 1)
    assert record.header("site") == "berlin"
    assert record.header("unit") == "kW"
    assert record.header("mqtt.qos") == 1
    assert task.details()["mqtt.version"] == "5"


@pytest.mark.parametrize("qos", [1, 2])
def test_a_full_buffer_stops_reading_and_drops_nothing(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str, qos: int
) -> None:
    task = start_source(
        f"{mqtt_prefix}/#",
        **{"mqtt.buffer.records": "5", "batch.size": "3", "mqtt.qos": str(qos)},
    )
    payloads = [str(i).encode() for i in range(300)]
    publish_all(mosquitto, [(f"{mqtt_prefix}/n", payload) for payload in payloads], qos=qos)
    wait_for(lambda: task.details()["messages.buffered"] == 5, "a full buffer")
    assert task.details()["messages.received"] == 5  # reading paused: no more taken in
    records = drain(task, 300)
    assert task.poll() == []
    assert sorted(r.value for r in records) == sorted(payloads)  # every one, once


@pytest.mark.parametrize("qos", [1, 2])
def test_unacknowledged_messages_come_again_in_the_next_session(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str, qos: int
) -> None:
    """At QoS 2 too: no PUBREC before the log acknowledged the record, so Mosquitto
    still has the message and sends it again, flagged DUP."""
    client_id = f"session-{uuid.uuid4().hex[:10]}"
    props = {"mqtt.client.id": client_id, "mqtt.qos": str(qos)}
    first = start_source(f"{mqtt_prefix}/#", **props)
    publish_all(mosquitto, [(f"{mqtt_prefix}/n", str(i)) for i in range(20)], qos=qos)
    records = drain(first, 20, ack=False)
    for record in records[:10]:  # the log acknowledged only these
        first.commit_record(record)
    first.stop()
    publish_all(  # while away
        mosquitto, [(f"{mqtt_prefix}/n", str(i)) for i in range(20, 30)], qos=qos
    )

    second = start_source(f"{mqtt_prefix}/#", **props)
    again = drain(second, 20)
    values = {int(r.value) for r in again}
    assert values >= set(range(10, 30))  # unacknowledged and missed ones: none lost
    assert not values & set(range(10))  # acknowledged ones are not sent again
    resent = {int(r.value) for r in again if r.header("mqtt.duplicate")}
    assert resent == set(range(10, 20))  # sent before: flagged DUP
    assert {r.header("mqtt.qos") for r in again} == {qos}


def test_messages_arrive_over_tls(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    task = start_source(
        f"{mqtt_prefix}/#",
        **{
            "mqtt.server.uri": mosquitto.tls_uri,
            "mqtt.ssl.trust.store.path": str(mosquitto.ca_path),
        },
    )
    assert task.details()["broker"] == mosquitto.tls_uri
    publish_all(mosquitto, [(f"{mqtt_prefix}/secure", b"over tls")])
    [record] = drain(task, 1)
    assert (record.key, record.value) == (f"{mqtt_prefix}/secure", b"over tls")


def test_the_source_reconnects_after_the_broker_restarts(
    start_source, tmp_path: Path, mqtt_prefix: str
) -> None:
    server = MosquittoServer(tmp_path / "mosquitto", with_password=False).start()
    try:
        task = start_source(f"{mqtt_prefix}/#", **{"mqtt.server.uri": server.uri})
        publish_all(server, [(f"{mqtt_prefix}/n", b"before")])
        assert [r.value for r in drain(task, 1)] == [b"before"]
        server.stop()
        wait_for(lambda: task.details()["connection"] == "disconnected", "the loss noticed")
        assert task.details()["last.error"].startswith(f"lost the connection to {server.uri}")
        server.start()  # same port, no session kept: the source subscribes again
        wait_for(lambda: task.details()["connects"] == 2, "the source reconnected")
        publish_all(server, [(f"{mqtt_prefix}/n", b"after")])
        assert [r.value for r in drain(task, 1)] == [b"after"]
    finally:
        server.stop()


@pytest.mark.parametrize("qos", [0, 1, 2])
def test_bursts_and_packets_larger_than_a_read_chunk_arrive_whole_and_in_order(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str, qos: int
) -> None:
    """The client reads 64 KiB at a time: many packets per read, and packets split across reads."""
    task = start_source(f"{mqtt_prefix}/#", **{"mqtt.qos": str(qos)})
    big = bytes(range(256)) * 800  # 200 KiB: spans several reads
    payloads = [f"{n:05d}".encode() * (1 + n % 40) for n in range(2000)]
    payloads[500] = payloads[1500] = big
    publish_all(mosquitto, [(f"{mqtt_prefix}/burst", p) for p in payloads], qos=qos)
    records = drain(task, len(payloads))
    assert [r.value for r in records] == payloads


def test_qos_2_messages_arrive_once_and_are_acknowledged_after_the_log(
    start_source, mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    """QoS 2 messages come out as the others do; PUBREC only in commit_record."""
    task = start_source(f"{mqtt_prefix}/#", **{"mqtt.qos": "2"})
    payloads = [f"m{n}".encode() for n in range(20)]
    publish_all(mosquitto, [(f"{mqtt_prefix}/q2", p) for p in payloads], qos=2)
    records = drain(task, len(payloads))
    assert [r.value for r in records] == payloads
    assert {(r.key, r.header("mqtt.qos")) for r in records} == {(f"{mqtt_prefix}/q2", 2)}
    assert all(r.header("mqtt.message.id") > 0 for r in records)
    assert task.details()["messages.acked"] == len(payloads)
    assert task.poll() == []
