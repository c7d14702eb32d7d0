"""The common connector keys, sink topics rules, transform specs and secret masking."""

from __future__ import annotations

import pytest
from pydantic import Field, SecretStr

from connect_worker.connector_config import (
    HIDDEN,
    CommonConnectorConfig,
    SinkConnectorConfig,
    mask_secrets,
    predicate_specs,
    secret_keys,
    transform_specs,
)
from connect_worker.plugins import PluginRegistry
from connectors.api import ConfigError, PluginConfig


def test_common_defaults_are_kafkas() -> None:
    config = CommonConnectorConfig.from_props({"name": "c", "connector.class": "FileStreamSource"})
    assert config.tasks_max == 1
    assert config.transforms == [] and config.predicates == []
    assert config.errors_tolerance == "none"
    assert config.errors_retry_timeout == 0 and config.errors_retry_delay_max_ms == 60000
    assert not config.errors_log_enable and not config.errors_log_include_messages
    assert config.errors_deadletterqueue_topic_name == ""
    assert config.key_converter is None


def test_common_parsing_and_errors() -> None:
    config = CommonConnectorConfig.from_props(
        {
            "name": "c",
            "connector.class": "X",
            "tasks.max": "4",
            "transforms": "a, b",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.retry.timeout": "-1",
        }
    )
    assert config.tasks_max == 4 and config.transforms == ["a", "b"]
    assert config.errors_tolerance == "all" and config.errors_log_enable
    with pytest.raises(ConfigError) as info:
        CommonConnectorConfig.from_props({"tasks.max": "abc", "errors.tolerance": "some"})
    message = str(info.value)
    assert "name: is required" in message and "connector.class: is required" in message
    assert "tasks.max:" in message and "errors.tolerance:" in message
    with pytest.raises(ConfigError, match=r"tasks\.max"):
        CommonConnectorConfig.from_props({"name": "c", "connector.class": "X", "tasks.max": "0"})


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        ({}, "needs topics or topics.regex"),
        ({"topics": "a", "topics.regex": "a.*"}, "not both"),
        ({"topics.regex": "("}, "not a valid regex"),
        ({"topics": "a", "errors.deadletterqueue.topic.name": "a"}, "dead-letter"),
    ],
)
def test_sink_topics_rules(props: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        SinkConnectorConfig.from_props({"name": "s", "connector.class": "X", **props})


def test_sink_topics() -> None:
    base = {"name": "s", "connector.class": "X"}
    assert SinkConnectorConfig.from_props({**base, "topics": "a,b"}).topics == ["a", "b"]
    assert SinkConnectorConfig.from_props({**base, "topics.regex": "a.*"}).topics_regex == "a.*"


def test_transform_and_predicate_specs() -> None:
    props = {
        "transforms": "route,drop",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "tomb",
        "transforms.drop.negate": "true",
        "predicates": "tomb",
        "predicates.tomb.type": "RecordIsTombstone",
    }
    route, drop = transform_specs(props)
    assert (route.alias, route.type, route.props, route.predicate) == (
        "route", "RegexRouter", {"regex": "(.*)"}, None,
    )
    assert (drop.predicate, drop.negate, drop.props) == ("tomb", True, {})
    [tomb] = predicate_specs(props)
    assert (tomb.alias, tomb.type) == ("tomb", "RecordIsTombstone")
    with pytest.raises(ConfigError) as info:
        transform_specs({"transforms": "a", "transforms.a.predicate": "p"})
    assert "transforms.a.type: is required" in str(info.value)
    assert "transforms.a.predicate" in str(info.value)


class _SecretModel(PluginConfig):
    password: SecretStr = Field(alias="connection.password", description="x")
    maybe: SecretStr | None = Field(None, alias="ssh.key", description="x")
    user: str = Field("u", alias="connection.user", description="x")


def test_secret_keys_of_a_model() -> None:
    assert secret_keys(_SecretModel) == {"connection.password", "ssh.key"}


def test_mask_secrets_by_name_and_by_type() -> None:
    registry = PluginRegistry.load(entry_points=False)
    props = {
        "connector.class": "FileStreamSource",
        "file": "/tmp/x",
        "db.password": "hunter2",
        "aws.secret.access.key": "k",
        "sasl.jaas.config": "pw",
        "auth.token": "t",
        "tokenizer": "plain",
        "key.converter.basic.auth.user.info.password": "p",
        "ref.password": "${file:/etc/s.properties:pw}",
    }
    masked = mask_secrets(props, registry)
    assert masked["db.password"] == HIDDEN
    assert masked["aws.secret.access.key"] == HIDDEN
    assert masked["sasl.jaas.config"] == HIDDEN
    assert masked["auth.token"] == HIDDEN
    assert masked["key.converter.basic.auth.user.info.password"] == HIDDEN
    assert masked["tokenizer"] == "plain" and masked["file"] == "/tmp/x"
    assert masked["ref.password"] == "${file:/etc/s.properties:pw}"
    assert mask_secrets({"unknown": "x"}, None) == {"unknown": "x"}


@pytest.mark.parametrize("model", [CommonConnectorConfig, SinkConnectorConfig])
def test_every_field_has_a_description_and_alias(model: type[PluginConfig]) -> None:
    for name, info in model.model_fields.items():
        assert info.description, name
        assert info.alias, name
