"""The MQTT connectors' own metrics on a real worker's ``GET /metrics`` (issue 20):
messages received and published, in flight, and the connection's state across a
Mosquitto stopped and started again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.mosquitto import MosquittoServer
from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from tests.integration.mqtt.helpers import Subscriber, publish_all
from tests.support.scrape import Samples, sample, scrape

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
SRC, SNK = {"connector": "mq-src", "task": "0"}, {"connector": "mq-snk", "task": "0"}


def test_counts_in_flight_and_connection_state_follow_the_broker(
    fresh_worker: Callable[..., StandaloneProcess], tmp_path: Path
) -> None:
    mosquitto = MosquittoServer(tmp_path / "mosquitto", with_password=False).start()
    try:
        worker = fresh_worker().start()
        common = {"key_converter": STRING, "value_converter": BYTES,
                  "mqtt_server_uri": mosquitto.uri, "mqtt_reconnect_backoff_max_seconds": 1}
        worker.write_pipeline("mq-src", properties(
            name="mq-src", connector_class="MqttSource", mqtt_topics="m/in/#", kafka_topic="mqm",
            mqtt_qos=1, **common))
        worker.write_pipeline("mq-snk", properties(
            name="mq-snk", connector_class="MqttSink", topics="mqm", mqtt_topic="m/out/${key}",
            mqtt_qos=1, **common))

        def both(metric: str, value: float) -> Callable[[], Samples | None]:
            def check() -> Samples | None:
                samples = scrape(worker.url)
                ok = all(sample(samples, metric, **t) == value for t in (SRC, SNK))
                return samples if ok else None
            return check

        wait_for_rest(both("sluice_plugin_mqtt_connected", 1), "both tasks connected")
        subscriber = Subscriber(mosquitto, ["m/out/#"])
        try:
            publish_all(mosquitto, [(f"m/in/{i}", f"v{i}") for i in range(25)])
            subscriber.wait_count(25)
        finally:
            subscriber.close()
        samples = wait_for_rest(
            both("sluice_plugin_mqtt_messages_in_flight", 0),
            "nothing left in flight once the round trip is done",
        )
        assert sample(samples, "sluice_plugin_mqtt_messages_received_total", **SRC) == 25
        assert sample(samples, "sluice_plugin_mqtt_messages_published_total", **SNK) == 25
        for task in (SRC, SNK):
            assert sample(samples, "sluice_plugin_mqtt_reconnects_total", **task) == 0

        mosquitto.stop()
        wait_for_rest(both("sluice_plugin_mqtt_connected", 0), "both tasks disconnected")
        mosquitto.start()  # the same port again
        samples = wait_for_rest(both("sluice_plugin_mqtt_connected", 1), "both reconnected")
        for task in (SRC, SNK):
            assert sample(samples, "sluice_plugin_mqtt_reconnects_total", **task) == 1
    finally:
        mosquitto.stop()
