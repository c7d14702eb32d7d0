"""The bundled transforms as plugins: names, config declarations, registration."""

from __future__ import annotations

import pytest

import transforms.plugin
from connect_worker.plugins import PluginRegistry
from transforms.api import Predicate, Transformation
from transforms.plugin import PREDICATES, TRANSFORMS

KAFKA = "org.apache.kafka.connect.transforms."
KEY_VALUE_SMTS = [
    "Cast",
    "ExtractField",
    "Flatten",
    "HeaderFrom",
    "HoistField",
    "InsertField",
    "MaskField",
    "ReplaceField",
    "SetSchemaMetadata",
    "TimestampConverter",
]
PLAIN_SMTS = [
    "DropHeaders",
    "Filter",
    "InsertHeader",
    "RegexRouter",
    "TimestampRouter",
    "ValueToKey",
]
KAFKA_NAMES = [
    *(KAFKA + f"{name}${part}" for name in KEY_VALUE_SMTS for part in ("Key", "Value")),
    *(KAFKA + name for name in PLAIN_SMTS),
]
PREDICATE_NAMES = [
    KAFKA + "predicates." + name
    for name in ("TopicNameMatches", "HasHeaderKey", "RecordIsTombstone")
]
#: The least each class needs to configure.
MINIMAL_OPTIONS: dict[str, dict[str, str]] = {
    "Cast": {"spec": "a:int32"},
    "ExtractField": {"field": "a"},
    "HeaderFrom": {"fields": "a", "headers": "a", "operation": "copy"},
    "HoistField": {"field": "a"},
    "InsertField": {"static.field": "a", "static.value": "x"},
    "MaskField": {"fields": "a"},
    "SetSchemaMetadata": {"schema.name": "x"},
    "TimestampConverter": {"target.type": "unix"},
    "DropHeaders": {"headers": "a"},
    "InsertHeader": {"header": "a", "value.literal": "x"},
    "RegexRouter": {"regex": "a", "replacement": "b"},
    "ValueToKey": {"fields": "a"},
    "TopicNameMatches": {"pattern": "a"},
    "HasHeaderKey": {"name": "a"},
}


def _short(cls: type) -> str:
    return cls.aliases[-1].split("$")[0]


def test_all_sixteen_smts_and_three_predicates_answer_to_kafkas_names() -> None:
    names = {alias for cls in TRANSFORMS for alias in cls.aliases}
    assert set(KAFKA_NAMES) <= names
    assert {name.removeprefix(KAFKA) for name in KAFKA_NAMES} <= names  # short names too
    assert "io.debezium.transforms.ExtractNewRecordState" in names
    assert set(PREDICATE_NAMES) <= {alias for cls in PREDICATES for alias in cls.aliases}
    assert len(KEY_VALUE_SMTS) + len(PLAIN_SMTS) == 16


@pytest.mark.parametrize("cls", [*TRANSFORMS, *PREDICATES], ids=lambda c: c.__name__)
def test_every_option_is_declared_with_a_key_and_a_description(cls: type) -> None:
    for name, field in cls.config_model.model_fields.items():
        assert field.alias, f"{cls.__name__}.{name} has no user-facing key"
        assert field.description and len(field.description) > 10, f"{cls.__name__}.{name}"
    assert cls.__doc__ and cls.config_model.__doc__


@pytest.mark.parametrize("cls", [*TRANSFORMS, *PREDICATES], ids=lambda c: c.__name__)
def test_every_class_configures_with_its_minimal_options(cls: type) -> None:
    plugin = cls()
    plugin.configure({**MINIMAL_OPTIONS.get(_short(cls), {}), "type": "ignored", "negate": "x"})
    assert isinstance(plugin, Transformation | Predicate)
    plugin.close()


def test_the_plugin_registry_resolves_every_name() -> None:
    registry = PluginRegistry()
    assert registry.register(transforms.plugin, name="transforms.plugin")
    for name in KAFKA_NAMES:
        assert registry.transform_class(name).aliases[0] == name
    for cls in TRANSFORMS:
        assert registry.transform_class(f"{cls.__module__}.{cls.__qualname__}") is cls
    for name in PREDICATE_NAMES:
        assert registry.predicate_class(name).aliases[0] == name
