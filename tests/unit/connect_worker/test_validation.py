"""Connector config validation: per-key problems and Kafka's validate JSON shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from connect_worker.config_providers import providers_from_worker_config
from connect_worker.connector_config import HIDDEN, CommonConnectorConfig, SinkConnectorConfig
from connect_worker.plugins import PluginRegistry
from connect_worker.validation import plugin_config_definition, validate_connector_config
from connectors.api import hookimpl
from connectors.file.source import FileStreamSourceConnector

DEFINITION_KEYS = {
    "name", "type", "required", "default_value", "importance", "documentation", "group",
    "width", "display_name", "dependents", "order",
}
VALUE_KEYS = {"name", "value", "recommended_values", "errors", "visible"}


def source(**extra: str) -> dict[str, str]:
    return {"name": "s", "connector.class": "FileStreamSource", "file": "/tmp/in.txt",
            "topic": "demo", **extra}


def test_valid_config_and_response_shape(registry: PluginRegistry) -> None:
    result = validate_connector_config(registry, source())
    assert result.errors == {} and result.error_count == 0 and result.ok
    assert result.connector_class is FileStreamSourceConnector
    assert result.connector_type == "source"
    body = result.to_json("FileStreamSourceConnector")
    assert set(body) == {"name", "error_count", "groups", "configs"}
    assert body["name"] == "FileStreamSourceConnector" and body["error_count"] == 0
    assert body["groups"][:2] == ["Common", "Transforms"]
    assert "FileStreamSourceConnector" in body["groups"]
    names = [c["definition"]["name"] for c in body["configs"]]
    assert len(names) == len(set(names))
    assert {"name", "connector.class", "tasks.max", "file", "topic", "batch.size"} <= set(names)
    for config in body["configs"]:
        assert set(config) == {"definition", "value"}
        assert set(config["definition"]) == DEFINITION_KEYS
        assert set(config["value"]) == VALUE_KEYS
    by_name = {c["definition"]["name"]: c for c in body["configs"]}
    assert by_name["tasks.max"]["definition"]["type"] == "INT"
    assert by_name["tasks.max"]["definition"]["default_value"] == "1"
    assert by_name["tasks.max"]["value"]["value"] == "1"
    assert by_name["file"]["value"]["value"] == "/tmp/in.txt"
    assert by_name["file"]["definition"]["required"] is True
    assert by_name["errors.tolerance"]["value"]["recommended_values"] == ["none", "all"]
    assert by_name["errors.retry.delay.max.ms"]["definition"]["type"] == "LONG"
    assert by_name["connector.class"]["definition"]["type"] == "CLASS"


def test_the_common_keys_come_back_parsed_for_the_herder_to_keep(
    registry: PluginRegistry,
) -> None:
    result = validate_connector_config(
        registry, source(**{"tasks.max": "3", "errors.tolerance": "all"})
    )
    assert type(result.common) is CommonConnectorConfig
    assert result.common.tasks_max == 3 and result.common.errors_tolerance == "all"
    sink = {"name": "k", "connector.class": "FileStreamSink", "file": "/tmp/o.txt",
            "topics": "a,b", "errors.deadletterqueue.topic.name": "dlq"}
    parsed = validate_connector_config(registry, sink).common
    assert isinstance(parsed, SinkConnectorConfig) and parsed.topics == ["a", "b"]
    assert validate_connector_config(registry, source(**{"tasks.max": "abc"})).common is None
@pytest.mark.parametrize(
    ("props", "key", "fragment"),
    [
        (source(**{"tasks.max": "abc"}), "tasks.max", "valid integer"),
        (source(**{"tasks.max": "0"}), "tasks.max", "greater than or equal to 1"),
        ({"name": "s", "file": "/x", "topic": "t"}, "connector.class", "is required"),
        (source(**{"connector.class": "FileStreamSorce"}), "connector.class", "FileStreamSource"),
        ({k: v for k, v in source().items() if k != "file"}, "file", "is required"),
        (source(**{"errors.tolerance": "some"}), "errors.tolerance", "'none' or 'all'"),
        (source(**{"batch.size": "-1"}), "batch.size", "greater than or equal to 1"),
        (source(**{"value.converter": "Jsn"}), "value.converter", "unknown converter class"),
        (source(**{"header.converter": "Nope"}), "header.converter", "header converter"),
        (source(transforms="a"), "transforms.a.type", "is required"),
        (source(transforms="a", **{"transforms.a.type": "Nope"}), "transforms.a.type",
         "unknown transformation"),
        (source(predicates="p"), "predicates.p.type", "is required"),
    ],
)
def test_problems_are_reported_per_key(
    registry: PluginRegistry, props: dict[str, str], key: str, fragment: str
) -> None:
    result = validate_connector_config(registry, props)
    assert key in result.errors, result.errors
    assert any(fragment in problem for problem in result.errors[key]), result.errors[key]
    body = result.to_json("p")
    assert body["error_count"] == result.error_count >= 1
    reported = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"]}
    assert reported[key] == result.errors[key]


def test_many_problems_at_once(registry: PluginRegistry) -> None:
    props = {"connector.class": "FileStreamSink", "tasks.max": "abc",
             "key.converter": "StringConverter", "key.converter.converter.encoding": "klingon"}
    result = validate_connector_config(registry, props)
    assert set(result.errors) >= {"name", "tasks.max", "file", "topics", "topics.regex",
                                  "key.converter.converter.encoding"}
    assert result.connector_type == "sink"
    assert all(": " in line for line in result.problems())


def test_unknown_class_still_checks_common_keys(registry: PluginRegistry) -> None:
    result = validate_connector_config(registry, {"connector.class": "Nope", "tasks.max": "x"})
    assert result.connector_class is None and result.connector_type is None
    assert set(result.errors) == {"connector.class", "name", "tasks.max"}


def test_secrets_are_masked(registry: PluginRegistry) -> None:
    result = validate_connector_config(registry, source(**{"db.password": "hunter2"}))
    body = result.to_json("x")
    assert "hunter2" not in str(body)
    result = validate_connector_config(
        registry, source(**{"key.converter": "StringConverter",
                            "key.converter.api.secret": "hunter2"})
    )
    assert "hunter2" not in str(result.to_json("x"))


def test_references_resolved_with_providers(
    registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLUICE_TASKS", "3")
    providers = providers_from_worker_config({}, registry)
    props = source(**{"tasks.max": "${env:SLUICE_TASKS}", "topic": "${env:SLUICE_NO_SUCH}"})
    result = validate_connector_config(registry, props, providers)
    assert set(result.errors) == {"topic"}
    assert "no key 'SLUICE_NO_SUCH'" in result.errors["topic"][0]
    by_name = {c["value"]["name"]: c["value"] for c in result.to_json("x")["configs"]}
    assert by_name["tasks.max"]["value"] == "${env:SLUICE_TASKS}"


class _Exploding(BaseModel):
    @classmethod
    def model_validate(cls, *args: object, **kwargs: object) -> None:  # type: ignore[override]
        raise RuntimeError("kaboom")


class _BrokenSource(FileStreamSourceConnector):
    aliases = ("BrokenSource",)
    config_model = _Exploding  # type: ignore[assignment]


class _BrokenPlugin:
    @hookimpl
    def sluice_connectors(self) -> list[type]:
        return [_BrokenSource]


def test_never_raises_on_a_broken_plugin_model() -> None:
    registry = PluginRegistry.load(entry_points=False)
    assert registry.register(_BrokenPlugin(), name="broken")
    result = validate_connector_config(registry, source(**{"connector.class": "BrokenSource"}))
    assert result.connector_class is _BrokenSource
    assert any("kaboom" in p for p in result.errors["connector.class"])


def test_plugin_config_definition(registry: PluginRegistry) -> None:
    definitions = plugin_config_definition(FileStreamSourceConnector)
    assert [d["name"] for d in definitions] == ["file", "topic", "batch.size"]
    assert all(set(d) == DEFINITION_KEYS for d in definitions)
    converter = plugin_config_definition(registry.converter_class("JsonConverter"))
    assert converter[0]["name"] == "schemas.enable" and converter[0]["default_value"] == "true"
    assert plugin_config_definition(registry.converter_class("ByteArrayConverter")) == []


def test_every_bundled_model_field_has_a_description(registry: PluginRegistry) -> None:
    for descriptor in registry.plugins():
        model = getattr(descriptor.cls, "config_model", None)
        if model is None:
            continue
        for name, info in model.model_fields.items():
            assert info.description, f"{descriptor.class_name}.{name} has no description"
            assert info.alias or "." not in name, f"{descriptor.class_name}.{name}"


def test_hidden_marker_value() -> None:
    assert HIDDEN == "[hidden]"


def test_check_runs_only_when_asked_and_places_problems_under_their_key(
    registry: PluginRegistry, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    sink = {"name": "k", "connector.class": "FileStreamSink", "topics": "demo",
            "file": str(blocker / "out.txt")}
    assert validate_connector_config(registry, sink).ok  # config alone is fine
    result = validate_connector_config(registry, sink, check=True)
    assert result.errors == {"file": [f"{blocker} is not a directory"]}
    body = result.to_json("FileStreamSink")
    assert body["error_count"] == 1


def test_check_is_skipped_while_the_config_has_problems(registry: PluginRegistry) -> None:
    result = validate_connector_config(
        registry, {"name": "k", "connector.class": "FileStreamSink", "topics": "demo",
                   "file": "/etc/hostname/out.txt", "errors.tolerance": "some"},
        check=True,
    )
    assert set(result.errors) == {"errors.tolerance"}
