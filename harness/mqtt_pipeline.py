"""An MqttSource in a ``sluice standalone`` process, and a reader of its topic."""

from __future__ import annotations

from harness.mosquitto import MosquittoServer
from harness.standalone_process import StandaloneProcess, properties
from harness.wait import wait_for
from log_engine.client import SyncConsumer, TopicPartition


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


def start_source(
    worker: StandaloneProcess,
    mosquitto: MosquittoServer,
    mqtt_prefix: str,
    name: str,
    *,
    qos: int = 1,
) -> None:
    """Run pipeline ``name`` (topic ``name``): ``<mqtt_prefix>/#`` at ``qos``, until connected."""
    worker.write_pipeline(
        name,
        properties(
            name=name,
            connector_class="MqttSource",
            mqtt_server_uri=mosquitto.uri,
            mqtt_topics=f"{mqtt_prefix}/#",
            kafka_topic=name,
            mqtt_qos=qos,
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
