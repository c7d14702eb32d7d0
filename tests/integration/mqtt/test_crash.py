"""No MQTT message is lost when the worker is SIGKILLed mid-stream (QoS 1, persistent session)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import pytest

from log_engine.client import SyncConsumer, TopicPartition
from tests.integration.mqtt.helpers import publish_all, wait_for
from tests.support.mosquitto import MosquittoServer
from tests.support.standalone_process import StandaloneProcess, properties

COUNT = 10_000


class LogReader:
    """Reads partition 0 of a topic from the start, remembering the distinct values."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.values: set[bytes] = set()
        self.records = 0
        self._consumer = SyncConsumer(
            {"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"}
        )
        self._consumer.assign([TopicPartition(topic, 0)])

    def read(self) -> int:
        for record in self._consumer.poll(0.2):
            self.records += 1
            assert record.value is not None
            self.values.add(record.value)
        return len(self.values)

    def close(self) -> None:
        self._consumer.close()


@pytest.mark.slow
def test_sigkill_mid_stream_loses_no_message(
    fresh_worker: Callable[..., StandaloneProcess], mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    worker = fresh_worker().start()
    name, topic = "mqtt-crash", "mqtt-crash"
    worker.write_pipeline(
        name,
        properties(
            name=name,
            connector_class="MqttSource",
            mqtt_server_uri=mosquitto.uri,
            mqtt_topics=f"{mqtt_prefix}/#",
            kafka_topic=topic,
            mqtt_qos=1,
            key_converter="org.apache.kafka.connect.storage.StringConverter",
            value_converter="org.apache.kafka.connect.converters.ByteArrayConverter",
        ),
    )
    worker.wait_running(name)
    wait_for(
        lambda: worker.status(name)["tasks"][0].get("details", {}).get("connection")  # type: ignore[index]
        == "connected",
        "the source connected to Mosquitto",
    )
    sent = [str(i).encode() for i in range(COUNT)]
    publisher = threading.Thread(
        target=publish_all, args=(mosquitto, [(f"{mqtt_prefix}/n", v) for v in sent])
    )
    publisher.start()
    reader = LogReader(worker.bootstrap, topic)
    try:
        wait_for(lambda: reader.read() >= COUNT // 5, "a fifth of the messages in the log")
        assert worker.stop(signal.SIGKILL) == -signal.SIGKILL
        in_log_at_crash = len(reader.values)
        publisher.join(120)
        assert not publisher.is_alive()

        worker.start()  # same folder: same pipeline, same client id, same log
        wait_for(lambda: reader.read() >= COUNT, f"all {COUNT} messages in the log", 120)
        assert reader.values == set(sent)  # duplicates allowed, none missing
        assert in_log_at_crash < COUNT  # the crash really was mid-stream
    finally:
        reader.close()
        publisher.join(60)
