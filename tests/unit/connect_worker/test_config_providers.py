"""Config providers: ${file:...}, ${directory:...}, ${env:...}, worker declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.config_providers import (
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
    has_references,
    providers_from_worker_config,
    resolve_references,
)
from connect_worker.plugins import PluginRegistry
from connectors.api import ConfigError
from connectors.api.config_provider import ConfigProvider


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    (tmp_path / "db.properties").write_text("user=app\npassword=s3cr=t\n")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "token").write_text("abc\n")
    (folder / "other").write_text("x")
    return tmp_path


def defaults(registry: PluginRegistry) -> dict[str, ConfigProvider]:
    return providers_from_worker_config({}, registry)


def test_resolves_every_bundled_kind(
    secrets: Path, registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLUICE_TEST_HOST", "db.local")
    props = {
        "connection.url": "jdbc:postgresql://${env:SLUICE_TEST_HOST}:5432/x",
        "connection.user": f"${{file:{secrets}/db.properties:user}}",
        "connection.password": f"${{file:{secrets}/db.properties:password}}",
        "api.token": f"${{directory:{secrets}/run:token}}",
        "plain": "no references here",
    }
    assert has_references(props)
    resolved = resolve_references(props, defaults(registry))
    assert resolved == {
        "connection.url": "jdbc:postgresql://db.local:5432/x",
        "connection.user": "app",
        "connection.password": "s3cr=t",
        "api.token": "abc\n",
        "plain": "no references here",
    }


def test_missing_key_and_unknown_provider_name_the_config_key(
    secrets: Path, registry: PluginRegistry
) -> None:
    providers = defaults(registry)
    with pytest.raises(ConfigError) as info:
        resolve_references(
            {"a": f"${{file:{secrets}/db.properties:nope}}", "b": "${vault:secret/x:k}"},
            providers,
        )
    message = str(info.value)
    assert "a: ${file:" in message and "no key 'nope'" in message
    assert "b: ${vault:secret/x:k}" in message and "no config provider named 'vault'" in message


def test_unreadable_path_is_a_config_error(tmp_path: Path, registry: PluginRegistry) -> None:
    with pytest.raises(ConfigError, match=r"x: .*cannot read"):
        resolve_references({"x": f"${{file:{tmp_path}/missing.properties:k}}"}, defaults(registry))


def test_env_provider_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_A", "1")
    monkeypatch.setenv("OTHER_B", "2")
    provider = EnvVarConfigProvider()
    provider.configure({"allowlist.pattern": "SLUICE_.*"})
    assert provider.get("", {"SLUICE_A", "OTHER_B"}) == {"SLUICE_A": "1"}
    with pytest.raises(ConfigError, match="no path"):
        provider.get("/some/path", {"SLUICE_A"})


def test_allowed_paths(secrets: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    provider = FileConfigProvider()
    provider.configure({"allowed.paths": str(tmp_path_factory.mktemp("elsewhere"))})
    with pytest.raises(ConfigError, match=r"allowed\.paths"):
        provider.get(str(secrets / "db.properties"), {"user"})
    folder = DirectoryConfigProvider()
    folder.configure({"allowed.paths": str(secrets)})
    assert folder.get(str(secrets / "run"), None) == {"token": "abc\n", "other": "x"}
    assert folder.get(str(secrets / "run"), {"../db.properties"}) == {}


def test_worker_declares_providers_as_kafka_does(registry: PluginRegistry) -> None:
    props = {
        "config.providers": "f, e",
        "config.providers.f.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "config.providers.e.class": "env",
        "config.providers.e.param.allowlist.pattern": "HOME",
    }
    providers = providers_from_worker_config(props, registry)
    assert set(providers) == {"f", "e"}
    assert isinstance(providers["f"], FileConfigProvider)
    assert isinstance(providers["e"], EnvVarConfigProvider)
    assert set(defaults(registry)) == {"env", "file", "directory"}
    assert providers_from_worker_config({"config.providers": ""}, registry) == {}


def test_worker_provider_errors(registry: PluginRegistry) -> None:
    with pytest.raises(ConfigError, match=r"config\.providers\.x\.class: is required"):
        providers_from_worker_config({"config.providers": "x"}, registry)
    with pytest.raises(ConfigError, match="unknown config provider class 'Vault'"):
        providers_from_worker_config(
            {"config.providers": "x", "config.providers.x.class": "Vault"}, registry
        )
    with pytest.raises(ConfigError, match=r"allowlist\.pattern"):
        providers_from_worker_config(
            {
                "config.providers": "e",
                "config.providers.e.class": "env",
                "config.providers.e.param.allowlist.pattern": "(",
            },
            registry,
        )
