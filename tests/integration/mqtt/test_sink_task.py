"""MqttSinkTask against a real Mosquitto: templates, retain, acknowledgements, bad records."""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connectors.api import DataError, RetriableError, SinkRecord
from connectors.mqtt.sink import MqttSinkTask
from harness.mosquitto import MosquittoServer
from harness.wait import wait_for
from tests.integration.mqtt.helpers import Subscriber

StartSink = Callable[..., MqttSinkTask]


@pytest.fixture
def start_sink(mosquitto: MosquittoServer) -> Iterator[StartSink]:
    """Start MqttSinkTasks (connected), by default on the session's Mosquitto."""
    tasks: list[MqttSinkTask] = []

    def start(server: MosquittoServer = mosquitto, **props: str) -> MqttSinkTask:
        task = MqttSinkTask()
        task.start({"name": "sink", "mqtt.server.uri": server.uri, **props})
        tasks.append(task)
        wait_for(lambda: task.details()["connection"] == "connected", "the sink connected")
        return task

    yield start
    for task in tasks:
        task.stop()


@pytest.fixture
def subscribe(mosquitto: MosquittoServer) -> Iterator[Callable[..., Subscriber]]:
    subscribers: list[Subscriber] = []

    def make(topics: list[str], server: MosquittoServer = mosquitto, **kw: str) -> Subscriber:
        subscriber = Subscriber(server, topics, **kw)
        subscribers.append(subscriber)
        return subscriber

    yield make
    for subscriber in subscribers:
        subscriber.close()


def record(key: object, value: object, offset: int = 0, topic: str = "orders") -> SinkRecord:
    return SinkRecord(topic=topic, partition=0, key=key, value=value, kafka_offset=offset)


def test_template_topics_and_payload_encoding(
    start_sink: StartSink, subscribe, mqtt_prefix: str
) -> None:
    subscriber = subscribe([f"{mqtt_prefix}/#"])
    task = start_sink(**{"mqtt.topic": f"{mqtt_prefix}/${{topic}}/${{key}}"})
    task.put(
        [
            record("dev1", b"\x00raw"),
            record(b"dev2", "text \u00e9"),
            record("dev3", {"on": True, "n": [1, 2]}),
            record("dev4", None),
        ]
    )
    task.flush({})
    got = {m.topic: m.payload for m in subscriber.wait_count(4)}
    assert got == {
        f"{mqtt_prefix}/orders/dev1": b"\x00raw",
        f"{mqtt_prefix}/orders/dev2": "text \u00e9".encode(),
        f"{mqtt_prefix}/orders/dev3": b'{"on":true,"n":[1,2]}',
        f"{mqtt_prefix}/orders/dev4": b"",
    }


def test_retain_keeps_the_last_message_for_later_subscribers(
    start_sink: StartSink, subscribe, mqtt_prefix: str
) -> None:
    task = start_sink(**{"mqtt.topic": f"{mqtt_prefix}/state", "mqtt.retain": "true"})
    task.put([record("k", "first", 0), record("k", "last", 1)])
    task.flush({})
    [message] = subscribe([f"{mqtt_prefix}/state"]).wait_count(1)
    assert (message.payload, message.retain) == (b"last", True)


@pytest.mark.parametrize("qos", [1, 2])
def test_flush_returns_once_the_broker_acknowledged_everything(
    start_sink: StartSink, subscribe, mqtt_prefix: str, qos: int
) -> None:
    subscriber = subscribe([f"{mqtt_prefix}/#"], qos=qos)
    task = start_sink(**{"mqtt.topic": f"{mqtt_prefix}/n", "mqtt.qos": str(qos)})
    task.put([record(None, str(i), i) for i in range(500)])
    task.flush({})
    details = task.details()
    assert details["messages.acked"] == details["messages.published"] == 500
    assert task._pending == []  # nothing left waiting for PUBACK/PUBCOMP
    payloads = [m.payload for m in subscriber.wait_count(500)]
    assert sorted(payloads) == sorted(str(i).encode() for i in range(500))
    assert {m.qos for m in subscriber.received()} == {qos}


def test_a_template_that_makes_a_wildcard_topic_is_a_data_error_and_publishes_nothing(
    start_sink: StartSink, subscribe, mqtt_prefix: str
) -> None:
    subscriber = subscribe([f"{mqtt_prefix}/#"])
    task = start_sink(**{"mqtt.topic": f"{mqtt_prefix}/${{key}}"})
    with pytest.raises(DataError, match=r"contains a wildcard") as caught:
        task.put([record("good", "1", 0), record("bad/+", "2", 1), record("fine", "3", 2)])
    assert f"{mqtt_prefix}/bad/+" in str(caught.value)
    with pytest.raises(DataError, match="key is null"):
        task.put([record(None, "4", 3)])
    assert task.details()["messages.published"] == 0  # the batch was refused as a whole
    task.put([record("good", "1", 0), record("fine", "3", 2)])  # as the runtime retries
    task.flush({})
    assert sorted(m.payload for m in subscriber.wait_count(2)) == [b"1", b"3"]


@pytest.fixture(scope="module")
def small_mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoServer]:
    """A Mosquitto that takes packets of at most 1 KiB."""
    server = MosquittoServer(
        tmp_path_factory.mktemp("small-mosquitto"), max_packet_size=1024, with_password=False
    ).start()
    yield server
    server.stop()


def test_a_payload_over_the_broker_limit_is_a_data_error(
    start_sink: StartSink, subscribe, small_mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    subscriber = subscribe([f"{mqtt_prefix}/#"], server=small_mosquitto)
    task = start_sink(small_mosquitto, **{"mqtt.topic": f"{mqtt_prefix}/x", "mqtt.version": "5"})
    with pytest.raises(DataError, match=r"over the broker's Maximum Packet Size \(1024 bytes\)"):
        task.put([record("k", "small", 0), record("k", "x" * 2000, 1)])
    task.put([record("k", "small", 0)])
    task.flush({})
    assert [m.payload for m in subscriber.wait_count(1)] == [b"small"]
    with pytest.raises(DataError, match=r"over mqtt.max.payload.bytes \(10\)"):
        start_sink(small_mosquitto, **{"mqtt.max.payload.bytes": "10"}).put(
            [record("k", json.dumps({"too": "long for ten bytes"}))]
        )


def test_a_lost_broker_is_retriable_and_unacknowledged_messages_are_sent_again(
    start_sink: StartSink, tmp_path: Path, mqtt_prefix: str
) -> None:
    server = MosquittoServer(tmp_path / "mosquitto", with_password=False).start()
    try:
        task = start_sink(
            server,
            **{
                "mqtt.topic": f"{mqtt_prefix}/n",
                "mqtt.flush.timeout.seconds": "0.5",
                "mqtt.reconnect.backoff.min.seconds": "2",
                "mqtt.client.id": f"sink-{uuid.uuid4().hex[:8]}",
            },
        )
        assert server.process is not None
        os.kill(server.process.pid, signal.SIGSTOP)  # the broker hangs: no PUBACKs
        task.put([record(None, str(i), i) for i in range(50)])
        with pytest.raises(RetriableError, match="50 MQTT messages not acknowledged"):
            task.flush({})
        os.kill(server.process.pid, signal.SIGKILL)  # ... and dies with them
        server.process.wait()
        wait_for(lambda: task.details()["connection"] == "disconnected", "the sink noticing")
        with pytest.raises(RetriableError, match="not connected") as caught:
            task.put([record(None, "later", 50)])
        assert "50 messages awaiting acknowledgement" in str(caught.value)
        assert server.uri in str(caught.value)

        server.start()  # same port; the sink reconnects after its 2 s backoff
        subscriber = Subscriber(server, [f"{mqtt_prefix}/#"])
        wait_for(lambda: task.details()["connection"] == "connected", "the sink reconnected")
        task.put([record(None, "later", 50)])
        task.flush({})
        payloads = {m.payload for m in subscriber.wait_count(51)}
        assert payloads == {str(i).encode() for i in range(50)} | {b"later"}
        subscriber.close()
    finally:
        server.stop()
