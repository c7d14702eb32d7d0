"""A clean stop (SIGTERM) acknowledges every message already in the log: none comes twice.

The runtime flushes and runs the final commit before the task's ``stop()``, so
the source's PUBACKs for every record the log has reach Mosquitto before the
disconnect; what is redelivered after the restart is only what never reached
the log.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import pytest

from tests.integration.mqtt.helpers import publish_all, wait_for
from tests.integration.mqtt.test_crash import LogReader
from tests.support.mosquitto import MosquittoServer
from tests.support.standalone_process import StandaloneProcess, properties

COUNT = 4_000


@pytest.mark.slow
def test_a_clean_stop_mid_stream_leaves_each_message_once(
    fresh_worker: Callable[..., StandaloneProcess], mosquitto: MosquittoServer, mqtt_prefix: str
) -> None:
    worker = fresh_worker().start()
    name, topic = "mqtt-clean-stop", "mqtt-clean-stop"
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
        wait_for(lambda: reader.read() >= COUNT // 4, "a quarter of the messages in the log")
        assert worker.stop(signal.SIGTERM) == 0
        in_log_at_stop = reader.records
        publisher.join(120)
        assert not publisher.is_alive()

        worker.start()  # same folder: same pipeline, same client id, same log
        wait_for(lambda: reader.read() >= COUNT, f"all {COUNT} messages in the log", 120)
        wait_for(lambda: reader.read() >= COUNT and reader.records >= COUNT, "the log read")
        assert in_log_at_stop < COUNT  # the stop really was mid-stream
        assert reader.values == set(sent)
        assert reader.records == COUNT  # no message twice
    finally:
        reader.close()
        publisher.join(60)
