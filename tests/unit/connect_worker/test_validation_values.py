"""Every validation error of a connector key names the key and the bad value (issue 14)."""

from __future__ import annotations

import pytest
from pydantic import Field, SecretStr, ValidationError

from connect_worker.connector_config import HIDDEN, field_errors
from connect_worker.plugins import PluginRegistry
from connect_worker.validation import validate_connector_config
from connectors.api import ConfigError, PluginConfig
from connectors.file.config import FileSourceConfig


def source(**extra: str) -> dict[str, str]:
    return {"name": "s", "connector.class": "FileStreamSource", "file": "/tmp/in.txt",
            "topic": "demo", **extra}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tasks.max", "abc"),
        ("tasks.max", "0"),
        ("batch.size", "-5"),
        ("errors.tolerance", "some"),
        ("errors.retry.timeout", "soon"),
        ("transforms.r.regex", "("),
    ],
)
def test_validate_names_the_key_and_the_value(
    registry: PluginRegistry, key: str, value: str
) -> None:
    extra = {key: value}
    if key.startswith("transforms.r."):
        extra |= {"transforms": "r", "transforms.r.replacement": "x",
                  "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter"}
    result = validate_connector_config(registry, source(**extra))
    assert key in result.errors, result.errors
    assert any(f"(got {value!r})" in problem for problem in result.errors[key]), result.errors
    assert any(line.startswith(f"{key}: ") and repr(value) in line for line in result.problems())


def test_a_missing_key_says_so_without_a_value(registry: PluginRegistry) -> None:
    result = validate_connector_config(registry, {"connector.class": "FileStreamSource"})
    assert result.errors["file"] == ["is required and has no default"]


class Guarded(PluginConfig):
    """A model with a secret that has a constraint, and a key whose name says secret."""

    pin: SecretStr = Field(alias="db.pin", min_length=4, description="a PIN")
    api_key: int = Field(0, alias="api.key", description="a numeric key")
    retries: int = Field(0, alias="retries", description="how many")


def test_a_secret_value_is_never_shown() -> None:
    props = {"db.pin": "s3c", "api.key": "hunter2", "retries": "many"}
    with pytest.raises(ValidationError) as caught:
        Guarded.model_validate(props)
    errors = field_errors(caught.value, Guarded)
    assert errors["db.pin"][0].endswith(f"(got {HIDDEN})")
    assert errors["api.key"][0].endswith(f"(got {HIDDEN})")
    assert errors["retries"][0].endswith("(got 'many')")
    with pytest.raises(ConfigError) as raised:
        Guarded.from_props(props)
    text = str(raised.value)
    assert "s3c" not in text and "hunter2" not in text
    assert "db.pin: " in text and "retries: " in text and "'many'" in text


def test_a_plugin_config_error_names_the_value() -> None:
    with pytest.raises(ConfigError, match=r"batch\.size: .*valid integer.*\(got 'lots'\)"):
        FileSourceConfig.from_props({"file": "/tmp/x", "topic": "t", "batch.size": "lots"})


def test_a_long_value_is_cut() -> None:
    with pytest.raises(ConfigError) as raised:
        FileSourceConfig.from_props({"file": "/tmp/x", "topic": "t", "batch.size": "9" * 500})
    assert "9" * 70 in str(raised.value) and "9" * 100 not in str(raised.value)
