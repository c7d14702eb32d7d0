"""Plain paho clients for the MQTT tests: a publisher and a subscriber that keeps messages."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from harness.mosquitto import MosquittoServer
from harness.wait import WAIT_S, wait_for


def client(
    server: MosquittoServer, *, version: str = "3.1.1", max_inflight: int = 1000, **kwargs: Any
) -> mqtt.Client:
    """A connected paho client (network loop running) on the anonymous listener; it sends
    at most ``max_inflight`` unacknowledged QoS 1/2 messages (Mosquitto disconnects a
    client that sends more than its own ``max_inflight_messages``)."""
    v5 = version == "5"
    paho = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=kwargs.pop("client_id", f"test-{uuid.uuid4().hex[:10]}"),
        protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311,
        **kwargs,
    )
    paho.max_inflight_messages_set(max_inflight)
    paho.connect("127.0.0.1", server.port, 30)
    paho.loop_start()
    return paho


def publish_all(
    server: MosquittoServer,
    messages: Iterable[tuple[str, bytes | str]],
    *,
    qos: int = 1,
    retain: bool = False,
    version: str = "3.1.1",
    user_properties: list[tuple[str, str]] | None = None,
    max_inflight: int = 1000,
) -> int:
    """Publish ``messages`` and wait until the broker acknowledged every one."""
    publisher = client(server, version=version, max_inflight=max_inflight)
    properties = None
    if user_properties:
        properties = Properties(PacketTypes.PUBLISH)
        properties.UserProperty = user_properties
    try:
        infos = [
            publisher.publish(topic, payload, qos=qos, retain=retain, properties=properties)
            for topic, payload in messages
        ]
        for info in infos:
            info.wait_for_publish(WAIT_S)
            assert info.is_published()
        return len(infos)
    finally:
        publisher.disconnect()
        publisher.loop_stop()


class Subscriber:
    """Subscribes to topic filters and keeps every message it receives."""

    def __init__(
        self, server: MosquittoServer, topics: list[str], *, qos: int = 1, version: str = "3.1.1"
    ) -> None:
        self.messages: list[mqtt.MQTTMessage] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = client(server, version=version)
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *args: self._subscribed.set()
        self.client.subscribe([(topic, qos) for topic in topics])
        assert self._subscribed.wait(10), "no SUBACK"

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.messages.append(message)

    def received(self) -> list[mqtt.MQTTMessage]:
        with self._lock:
            return list(self.messages)

    def wait_count(self, count: int, timeout_s: float = WAIT_S) -> list[mqtt.MQTTMessage]:
        wait_for(lambda: len(self.received()) >= count, f"{count} MQTT messages", timeout_s)
        return self.received()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
