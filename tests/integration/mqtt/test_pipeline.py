"""The MQTT connectors in the worker runtime: a round trip, bad brokers, a dead-letter queue."""

from __future__ import annotations

from collections.abc import Callable

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.rest.models import connector_status_json
from harness.broker_process import BrokerProcess, free_port
from harness.mosquitto import USER, MosquittoServer
from harness.wait import wait_for
from log_engine.client import SyncProducer
from tests.integration.mqtt.helpers import Subscriber, publish_all
from tests.support.log_reading import read_all

MakeHerder = Callable[..., StandaloneHerder]
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"


def task_details(herder: StandaloneHerder, name: str) -> dict:
    tasks = connector_status_json(herder.connector_status(name))["tasks"]
    return tasks[0].get("details", {}) if tasks else {}


def test_round_trip_mqtt_to_log_to_mqtt(
    make_herder: MakeHerder,
    broker: BrokerProcess,
    mosquitto: MosquittoServer,
    mqtt_prefix: str,
    topic_name: str,
) -> None:
    herder = make_herder()
    p = mqtt_prefix
    subscriber = Subscriber(mosquitto, [f"{p}/out/#"])
    common = {"key.converter": STRING, "value.converter": BYTES, "mqtt.server.uri": mosquitto.uri}
    herder.put_connector_config(
        f"{topic_name}-src",
        {
            "connector.class": "io.confluent.connect.mqtt.MqttSourceConnector",
            "mqtt.topics": f"{p}/in/#",
            "kafka.topic": topic_name,
            **common,
        },
        allow_replace=False,
    )
    herder.put_connector_config(
        f"{topic_name}-sink",
        {
            "connector.class": "MqttSink",
            "topics": topic_name,
            "mqtt.topic": f"{p}/out/${{key}}",
            "mqtt.qos": "1",
            **common,
        },
        allow_replace=False,
    )
    wait_for(
        lambda: task_details(herder, f"{topic_name}-src").get("connection") == "connected",
        "the source connected",
    )
    sent = [(f"{p}/in/dev{i % 3}", f"reading {i}".encode()) for i in range(200)]
    publish_all(mosquitto, sent)

    records = read_all(broker, topic_name, 200)
    assert sorted((r.key, r.value) for r in records) == sorted(
        (topic.encode(), payload) for topic, payload in sent
    )
    received = subscriber.wait_count(200)
    assert sorted((m.topic, m.payload) for m in received) == sorted(
        (f"{p}/out/{topic}", payload) for topic, payload in sent
    )
    wait_for(
        lambda: task_details(herder, f"{topic_name}-src").get("messages.acked") == 200,
        "the source acknowledging all 200 after the log did",
    )
    subscriber.close()


def test_an_unreachable_broker_shows_in_the_status_and_is_retried(
    make_herder: MakeHerder, topic_name: str
) -> None:
    herder = make_herder()
    uri = f"tcp://127.0.0.1:{free_port()}"
    herder.put_connector_config(
        topic_name,
        {
            "connector.class": "MqttSource",
            "mqtt.server.uri": uri,
            "mqtt.topics": "x/#",
            "kafka.topic": topic_name,
            "mqtt.reconnect.backoff.min.seconds": "1",
            "mqtt.reconnect.backoff.max.seconds": "2",
        },
        allow_replace=False,
    )
    wait_for(
        lambda: task_details(herder, topic_name).get("connection.attempts", 0) >= 2,
        "a second connection attempt",
    )
    status = connector_status_json(herder.connector_status(topic_name))
    task = status["tasks"][0]
    assert task["state"] == "RUNNING"  # waiting for the broker, not failed
    assert task["details"]["connection"] == "disconnected"
    assert task["details"]["broker"] == uri
    assert task["details"]["last.error"] == (
        f"cannot connect to {uri}: ConnectionRefusedError: [Errno 111] Connection refused"
    )


def test_refused_credentials_show_in_the_status(
    make_herder: MakeHerder, mosquitto: MosquittoServer, topic_name: str
) -> None:
    herder = make_herder()
    herder.put_connector_config(
        topic_name,
        {
            "connector.class": "MqttSink",
            "topics": topic_name,
            "mqtt.server.uri": mosquitto.password_uri,
            "mqtt.username": USER,
            "mqtt.password": "wrong",
        },
        allow_replace=False,
    )
    wait_for(lambda: "last.error" in task_details(herder, topic_name), "a connection error")
    details = task_details(herder, topic_name)
    assert details["connection"] == "disconnected"
    expected = f"{mosquitto.password_uri} refused the connection: Not authorized"
    assert details["last.error"] == expected
    assert "wrong" not in str(connector_status_json(herder.connector_status(topic_name)))


def test_records_the_sink_cannot_publish_go_to_the_dead_letter_queue(
    make_herder: MakeHerder,
    broker: BrokerProcess,
    mosquitto: MosquittoServer,
    mqtt_prefix: str,
    topic_name: str,
) -> None:
    herder = make_herder()
    subscriber = Subscriber(mosquitto, [f"{mqtt_prefix}/#"])
    keys = ["a", "b", "bad+key", "c", "bad#", "d"]
    with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
        for i, key in enumerate(keys):
            producer.send(topic_name, f"v{i}".encode(), key.encode(), None, 0).result(30)
    dlq = f"{topic_name}-dlq"
    herder.put_connector_config(
        topic_name,
        {
            "connector.class": "MqttSink",
            "topics": topic_name,
            "mqtt.server.uri": mosquitto.uri,
            "mqtt.topic": f"{mqtt_prefix}/${{key}}",
            "key.converter": STRING,
            "value.converter": BYTES,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
        allow_replace=False,
    )
    published = subscriber.wait_count(4)
    assert sorted((m.topic, m.payload) for m in published) == [
        (f"{mqtt_prefix}/a", b"v0"),
        (f"{mqtt_prefix}/b", b"v1"),
        (f"{mqtt_prefix}/c", b"v3"),
        (f"{mqtt_prefix}/d", b"v5"),
    ]
    dead = read_all(broker, dlq, 2)
    assert [(r.key, r.value) for r in dead] == [(b"bad+key", b"v2"), (b"bad#", b"v4")]
    headers = dict(dead[0].headers)
    assert b"contains a wildcard" in headers["__connect.errors.exception.message"]
    assert headers["__connect.errors.exception.class.name"] == b"connectors.api.errors.DataError"
    subscriber.close()
