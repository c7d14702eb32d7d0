"""The MQTT connectors' config models: URIs, topic filters, cross-field rules, secrets."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError
from connectors.mqtt.config import MqttSinkConfig, MqttSourceConfig, ServerUri, parse_server_uris
from connectors.mqtt.sink import MqttSinkConnector
from connectors.mqtt.source import MqttSourceConnector

SOURCE = {"mqtt.server.uri": "tcp://a:1883", "mqtt.topics": "x/#", "kafka.topic": "t"}


def test_server_uris_are_a_list_with_default_ports() -> None:
    assert parse_server_uris("tcp://a, ssl://b:9999 ,tcp://c:1884") == (
        ServerUri("tcp", "a", 1883),
        ServerUri("ssl", "b", 9999),
        ServerUri("tcp", "c", 1884),
    )
    assert str(parse_server_uris("ssl://broker")[0]) == "ssl://broker:8883"


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("mqtt://a:1883", "must start with tcp:// or ssl://"),
        ("tcp://:1883", "has no host"),
        ("tcp://a:port", "has a bad port"),
        (" , ", "needs at least one"),
        ("tcp://a,ssl://b", "mixes tcp:// and ssl://"),
    ],
)
def test_bad_server_uris_name_the_key(uri: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=f"mqtt.server.uri: .*{problem}"):
        MqttSourceConfig.from_props({**SOURCE, "mqtt.server.uri": uri})


def test_source_defaults_are_the_at_least_once_ones() -> None:
    config = MqttSourceConfig.from_props({**SOURCE, "mqtt.topics": "a/+/c, b/#"})
    assert config.topics == ["a/+/c", "b/#"]
    assert (config.qos, config.clean_session, config.version) == (1, False, "3.1.1")
    assert config.uses_tls is False


@pytest.mark.parametrize("bad", ["a/#/b", "a/b#", "a+/b", ""])
def test_bad_topic_filters_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"mqtt\.topics"):
        MqttSourceConfig.from_props({**SOURCE, "mqtt.topics": f"ok/#,{bad}" if bad else ""})


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"mqtt.qos": "3"}, "mqtt.qos"),
        ({"mqtt.version": "4"}, "mqtt.version"),
        ({"mqtt.password": "p"}, "mqtt.password is set but mqtt.username is not"),
        ({"mqtt.ssl.key.path": "/k.pem"}, "need mqtt.ssl.key.store.path"),
        (
            {"mqtt.reconnect.backoff.min.seconds": "10", "mqtt.reconnect.backoff.max.seconds": "5"},
            "backoff.max.seconds is below",
        ),
    ],
)
def test_inconsistent_settings_are_config_errors(extra: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        MqttSourceConfig.from_props({**SOURCE, **extra})


def test_passwords_are_secrets() -> None:
    config = MqttSinkConfig.from_props(
        {"mqtt.server.uri": "tcp://a", "mqtt.username": "u", "mqtt.password": "hunter2"}
    )
    assert "hunter2" not in repr(config)
    assert config.password is not None and config.password.get_secret_value() == "hunter2"


def test_sink_start_rejects_unknown_template_placeholders() -> None:
    with pytest.raises(ConfigError, match=r"mqtt.topic: unknown placeholder\(s\) \$\{value\}"):
        MqttSinkConnector().start({"mqtt.server.uri": "tcp://a", "mqtt.topic": "x/${value}"})
    with pytest.raises(ConfigError, match=r"mqtt\.topic: 'x/#' contains a wildcard"):
        MqttSinkConnector().start({"mqtt.server.uri": "tcp://a", "mqtt.topic": "x/#"})


def test_connectors_answer_to_confluent_class_names_and_every_key_is_described() -> None:
    assert "io.confluent.connect.mqtt.MqttSourceConnector" in MqttSourceConnector.aliases
    assert "io.confluent.connect.mqtt.MqttSinkConnector" in MqttSinkConnector.aliases
    assert "MqttSource" in MqttSourceConnector.aliases and "MqttSink" in MqttSinkConnector.aliases
    for model in (MqttSourceConfig, MqttSinkConfig):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
            assert field.alias, f"{model.__name__}.{name} has no dotted key"


def test_one_source_task_whatever_tasks_max() -> None:
    connector = MqttSourceConnector()
    connector.start({**SOURCE, "tasks.max": "4"})
    assert len(connector.task_configs(4)) == 1
