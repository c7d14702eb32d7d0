"""``check()`` of both MQTT connectors connects for real and names what went wrong."""

from __future__ import annotations

from connectors.mqtt.sink import MqttSinkConnector
from connectors.mqtt.source import MqttSourceConnector
from harness.broker_process import free_port
from harness.mosquitto import PASSWORD, USER, MosquittoServer


def source_props(uri: str, **extra: str) -> dict[str, str]:
    return {"mqtt.server.uri": uri, "mqtt.topics": "a/#", "kafka.topic": "t", **extra}


def test_a_reachable_broker_has_no_problems(mosquitto: MosquittoServer) -> None:
    assert MqttSourceConnector().check(source_props(mosquitto.uri)) == []
    assert MqttSinkConnector().check({"mqtt.server.uri": mosquitto.uri, "topics": "t"}) == []


def test_an_unreachable_broker_is_reported_with_the_reason() -> None:
    uri = f"tcp://127.0.0.1:{free_port()}"
    assert MqttSourceConnector().check(source_props(uri)) == [
        f"mqtt.server.uri: cannot connect to {uri}: "
        "ConnectionRefusedError: [Errno 111] Connection refused"
    ]


def test_refused_credentials_are_reported_per_uri(mosquitto: MosquittoServer) -> None:
    down = f"tcp://127.0.0.1:{free_port()}"
    uris = f"{down},{mosquitto.password_uri}"
    for version in ("3.1.1", "5"):
        problems = MqttSinkConnector().check(
            {
                "mqtt.server.uri": uris,
                "mqtt.username": USER,
                "mqtt.password": "wrong",
                "mqtt.version": version,
            }
        )
        assert len(problems) == 2
        assert problems[0].startswith(f"mqtt.server.uri: cannot connect to {down}")
        assert problems[1].startswith(
            f"mqtt.username/mqtt.password: {mosquitto.password_uri} refused the connection:"
        )
        assert "Not authorized" in problems[1] or "Bad user name or password" in problems[1]


def test_the_first_uri_that_accepts_is_enough(mosquitto: MosquittoServer) -> None:
    uris = f"tcp://127.0.0.1:{free_port()},{mosquitto.password_uri}"
    props = source_props(uris, **{"mqtt.username": USER, "mqtt.password": PASSWORD})
    assert MqttSourceConnector().check(props) == []


def test_tls_with_the_trust_store_connects_and_without_it_names_the_failure(
    mosquitto: MosquittoServer,
) -> None:
    trusted = source_props(
        mosquitto.tls_uri, **{"mqtt.ssl.trust.store.path": str(mosquitto.ca_path)}
    )
    assert MqttSourceConnector().check(trusted) == []
    [problem] = MqttSourceConnector().check(source_props(mosquitto.tls_uri))
    assert problem.startswith(f"mqtt.server.uri: cannot connect to {mosquitto.tls_uri}: SSL")
    assert "certificate verify failed" in problem
