"""MqttSourceTask at QoS 2 against a real Mosquitto: the PUBREC / PUBREL / PUBCOMP exchange.

A Mosquitto of this module's own sends at most :data:`WINDOW` unfinished QoS
1/2 messages to an MQTT 3.1.1 client (``max_inflight_messages``), to an MQTT 5
client at most its Receive Maximum (the source's ``mqtt.buffer.records``); a
QoS 2 message stays unfinished until the broker has the client's PUBCOMP. So
more messages than the window arrive only if the source answers every PUBREL.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from connectors.mqtt.source import MqttSourceTask
from harness.mosquitto import MosquittoServer
from harness.wait import wait_for
from tests.integration.mqtt.helpers import publish_all
from tests.integration.mqtt.test_source_task import drain, source_tasks

WINDOW = 10
VERSIONS = ["3.1.1", "5"]


@pytest.fixture(scope="module")
def small_window(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoServer]:
    """A Mosquitto that sends a client at most :data:`WINDOW` unfinished messages."""
    server = MosquittoServer(
        tmp_path_factory.mktemp("mosquitto-window"),
        max_inflight_messages=WINDOW,
        with_password=False,
    ).start()
    yield server
    server.stop()


@pytest.fixture
def start_task(small_window: MosquittoServer) -> Iterator[Callable[..., MqttSourceTask]]:
    """Start QoS 2 MqttSourceTasks (connected) on the small-window Mosquitto."""
    tasks = source_tasks(small_window.uri)
    start = next(tasks)

    def start_qos2(topics: str, client_id: str, **props: str) -> MqttSourceTask:
        return start(topics, **{"mqtt.client.id": client_id, "mqtt.qos": "2", **props})

    yield start_qos2
    next(tasks, None)  # stops the tasks


@pytest.mark.parametrize("version", VERSIONS)
def test_pubcomps_release_the_in_flight_window(
    start_task, small_window: MosquittoServer, mqtt_prefix: str, version: str
) -> None:
    """20 windows' worth of QoS 2 messages all arrive, once each, PUBREC'd after the log."""
    count = 20 * WINDOW
    props = {"mqtt.version": version}
    if version == "5":  # a Receive Maximum below the broker's window: it is what limits
        props["mqtt.buffer.records"] = str(WINDOW // 2)
    task = start_task(f"{mqtt_prefix}/#", f"window-{uuid.uuid4().hex[:10]}", **props)
    payloads = [f"m{n}".encode() for n in range(count)]
    publisher = threading.Thread(
        target=publish_all,
        args=(small_window, [(f"{mqtt_prefix}/q2", p) for p in payloads]),
        kwargs={"qos": 2, "version": version, "max_inflight": WINDOW},
    )
    publisher.start()
    try:
        records = drain(task, count)  # commit_record for each: PUBREC, then PUBREL -> PUBCOMP
    finally:
        publisher.join(60)
    assert [r.value for r in records] == payloads
    assert {r.header("mqtt.qos") for r in records} == {2}
    assert task.details()["messages.acked"] == count
    assert task.poll() == []  # nothing delivered twice


def leave_pubrels_unanswered(
    server: MosquittoServer, version: str, client_id: str, topic: str, count: int
) -> None:
    """A persistent session under ``client_id`` left with ``count`` QoS 2 messages that were
    PUBREC'd and PUBREL'd but never PUBCOMP'd, as a worker killed after the log write leaves it.

    The client is paho acknowledging by hand: it sends PUBREC on arrival, hands the message
    over on PUBREL and would send PUBCOMP only on ``ack()``, never called here.
    """
    released: list[bytes] = []
    subscribed = threading.Event()
    v5 = version == "5"
    paho = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=client_id,
        protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311,
        clean_session=None if v5 else False,
        manual_ack=True,
    )
    paho.on_message = lambda _client, _userdata, message: released.append(message.payload)
    paho.on_subscribe = lambda *args: subscribed.set()
    if v5:
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600
        paho.connect("127.0.0.1", server.port, 30, clean_start=False, properties=properties)
    else:
        paho.connect("127.0.0.1", server.port, 30)
    paho.loop_start()
    try:
        paho.subscribe(topic, 2)
        assert subscribed.wait(10), "no SUBACK"
        publish_all(
            server, [(topic, f"old{n}".encode()) for n in range(count)], qos=2, max_inflight=count
        )
        wait_for(lambda: len(released) == count, "the PUBRELs of the first messages")
    finally:
        paho.disconnect()  # the session keeps the messages waiting for PUBCOMP
        paho.loop_stop()


@pytest.mark.parametrize("version", VERSIONS)
def test_pubrels_left_by_a_crash_after_pubrec_are_answered_on_reconnect(
    start_task, small_window: MosquittoServer, mqtt_prefix: str, version: str
) -> None:
    """A full window waits for PUBCOMP: the messages published afterwards come only once
    the new task answered the PUBRELs Mosquitto sends again, and the old ones not again."""
    client_id = f"crashed-{uuid.uuid4().hex[:10]}"
    topic = f"{mqtt_prefix}/q2"
    leave_pubrels_unanswered(small_window, version, client_id, topic, WINDOW)
    new = [f"new{n}".encode() for n in range(2 * WINDOW)]
    publish_all(small_window, [(topic, p) for p in new], qos=2, max_inflight=WINDOW)
    # MQTT 5: Mosquitto's window for the task is its Receive Maximum (mqtt.buffer.records)
    task = start_task(
        topic, client_id, **{"mqtt.version": version, "mqtt.buffer.records": str(WINDOW)}
    )
    records = drain(task, len(new))
    assert [r.value for r in records] == new
    assert task.poll() == []
