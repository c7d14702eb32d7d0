"""Config providers: ``${provider:path:key}`` references, resolved late.

Bundled providers (registered through the ``sluice_config_providers`` hook):

==================  ========================  =====================================
short name          Kafka's class name         reference
==================  ========================  =====================================
``file``            FileConfigProvider         ``${file:/etc/db.properties:password}``
                                               (a key of a .properties file)
``directory``       DirectoryConfigProvider    ``${directory:/run/secrets:db_pass}``
                                               (the content of a file in a folder)
``env``             EnvVarConfigProvider       ``${env:DB_PASSWORD}`` (no path)
==================  ========================  =====================================

The worker declares them as Kafka does: ``config.providers=file,env`` plus
``config.providers.<name>.class`` and ``config.providers.<name>.param.*``.
Ours: a worker that does not set ``config.providers`` at all gets ``env``,
``file`` and ``directory`` ready to use (Kafka has none by default); set
``config.providers=`` (empty) to have none.

A reference is ``${provider:path:key}`` or ``${provider:key}`` (empty path).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from connect_worker.properties import PropertiesError, load_properties
from connectors.api import ConfigError, PluginConfig, hookimpl
from connectors.api.config_provider import ConfigProvider

if TYPE_CHECKING:
    from connect_worker.plugins import PluginRegistry

#: ``${provider:path:key}`` / ``${provider:key}``, as Kafka's default pattern.
REFERENCE = re.compile(r"\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}")
DEFAULT_PROVIDERS = {
    "env": "EnvVarConfigProvider",
    "file": "FileConfigProvider",
    "directory": "DirectoryConfigProvider",
}
_KAFKA = "org.apache.kafka.common.config.provider."


class _PathsConfig(PluginConfig):
    allowed_paths: list[str] = Field(
        default_factory=list,
        alias="allowed.paths",
        description="Comma-separated directories the provider may read under; empty: any.",
    )

    @field_validator("allowed_paths", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value


class _PathLimitedProvider(ConfigProvider):
    config_model = _PathsConfig

    def __init__(self) -> None:
        self._allowed: list[Path] = []

    def configure(self, props: Mapping[str, str]) -> None:
        config = _PathsConfig.from_props(props)
        self._allowed = [Path(p).resolve() for p in config.allowed_paths]

    def _checked(self, path: str) -> Path:
        if not path:
            raise ConfigError(f"{type(self).__name__} needs a path: ${{provider:path:key}}")
        resolved = Path(path).resolve()
        if self._allowed and not any(resolved.is_relative_to(a) for a in self._allowed):
            raise ConfigError(f"{path} is not under the provider's allowed.paths")
        return resolved


class FileConfigProvider(_PathLimitedProvider):
    """Keys of a ``.properties`` file: ``${file:/etc/secrets.properties:db.password}``."""

    aliases = ("file", "FileConfigProvider", _KAFKA + "FileConfigProvider")

    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        try:
            values = load_properties(self._checked(path))
        except PropertiesError as exc:
            raise ConfigError(str(exc)) from None
        return values if keys is None else {k: v for k, v in values.items() if k in keys}


class DirectoryConfigProvider(_PathLimitedProvider):
    """Files of a folder, one value each (Docker/Kubernetes secrets):
    ``${directory:/run/secrets:db_password}`` is that file's content."""

    aliases = ("directory", "DirectoryConfigProvider", _KAFKA + "DirectoryConfigProvider")

    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        folder = self._checked(path)
        if not folder.is_dir():
            raise ConfigError(f"{path} is not a directory")
        names = keys if keys is not None else {p.name for p in folder.iterdir()}
        values = {}
        for name in names:
            file = folder / name
            if "/" in name or name in ("", ".", "..") or not file.is_file():
                continue
            try:
                values[name] = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"cannot read {file}: {exc}") from None
        return values


class _EnvConfig(PluginConfig):
    allowlist_pattern: str = Field(
        ".*",
        alias="allowlist.pattern",
        description="Only environment variables whose names fully match this regex resolve.",
    )

    @field_validator("allowlist_pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regex: {exc}") from None
        return value


class EnvVarConfigProvider(ConfigProvider):
    """Environment variables: ``${env:DB_PASSWORD}`` (the path must be empty)."""

    config_model = _EnvConfig
    aliases = ("env", "EnvVarConfigProvider", "EnvConfigProvider", _KAFKA + "EnvVarConfigProvider")

    def __init__(self) -> None:
        self._allow = re.compile(".*")

    def configure(self, props: Mapping[str, str]) -> None:
        self._allow = re.compile(_EnvConfig.from_props(props).allowlist_pattern)

    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        if path:
            raise ConfigError(f"the env provider takes no path (got {path!r}): use ${{env:NAME}}")
        names = keys if keys is not None else set(os.environ)
        return {
            n: os.environ[n] for n in names if n in os.environ and self._allow.fullmatch(n)
        }


EnvConfigProvider = EnvVarConfigProvider


@hookimpl
def sluice_config_providers() -> list[type]:
    """The bundled config providers."""
    return [FileConfigProvider, DirectoryConfigProvider, EnvVarConfigProvider]


def has_references(props: Mapping[str, str]) -> bool:
    """Whether any value holds a ``${...:...}`` reference."""
    return any("${" in v and REFERENCE.search(v) for v in props.values())


def resolve_references(
    props: Mapping[str, str], providers: Mapping[str, ConfigProvider]
) -> dict[str, str]:
    """``props`` with every ``${provider:path:key}`` replaced by its value.

    Each (provider, path) is asked once for all its keys. An unknown provider or
    a missing key is a ConfigError naming the config key and the reference.
    """
    wanted: dict[tuple[str, str], set[str]] = {}
    for value in props.values():
        if "${" in value:
            for match in REFERENCE.finditer(value):
                provider, path, key = match.group(1), match.group(2) or "", match.group(3)
                wanted.setdefault((provider, path), set()).add(key)
    if not wanted:
        return dict(props)
    found: dict[tuple[str, str], dict[str, str] | ConfigError] = {}
    for (name, path), keys in wanted.items():
        provider = providers.get(name)
        if provider is None:
            continue
        try:
            found[(name, path)] = provider.get(path, keys)
        except ConfigError as exc:
            found[(name, path)] = exc
        except Exception as exc:  # a third-party provider failing must name the reference
            found[(name, path)] = ConfigError(f"{type(exc).__name__}: {exc}")
    problems: list[str] = []
    resolved = {k: _substitute(k, v, providers, found, problems) for k, v in props.items()}
    if problems:
        raise ConfigError("; ".join(problems))
    return resolved


def _substitute(
    config_key: str,
    value: str,
    providers: Mapping[str, ConfigProvider],
    found: Mapping[tuple[str, str], dict[str, str] | ConfigError],
    problems: list[str],
) -> str:
    if "${" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        name, path, key = match.group(1), match.group(2) or "", match.group(3)
        reference = match.group(0)
        if name not in providers:
            known = ", ".join(sorted(providers)) or "none"
            problems.append(
                f"{config_key}: {reference}: no config provider named {name!r} "
                f"(configured: {known})"
            )
            return reference
        values = found[(name, path)]
        if isinstance(values, ConfigError):
            problems.append(f"{config_key}: {reference}: {values}")
            return reference
        if key not in values:
            where = f" in {path}" if path else ""
            problems.append(f"{config_key}: {reference}: no key {key!r}{where}")
            return reference
        return values[key]

    return REFERENCE.sub(replace, value)


def providers_from_worker_config(
    props: Mapping[str, str], registry: PluginRegistry
) -> dict[str, ConfigProvider]:
    """Instantiate and configure the providers a worker's properties declare.

    ``config.providers=a,b`` with ``config.providers.a.class`` (a name or alias
    the registry resolves) and ``config.providers.a.param.<k>=<v>``. With no
    ``config.providers`` key at all: ``env``, ``file`` and ``directory``.
    """
    declared = props.get("config.providers")
    if declared is None:
        names = list(DEFAULT_PROVIDERS)
        classes = dict(DEFAULT_PROVIDERS)
    else:
        names = [n.strip() for n in declared.split(",") if n.strip()]
        classes = {}
        for name in names:
            class_name = props.get(f"config.providers.{name}.class", "").strip()
            if not class_name:
                raise ConfigError(
                    f"config.providers.{name}.class: is required for config provider {name!r}"
                )
            classes[name] = class_name
    providers: dict[str, ConfigProvider] = {}
    for name in names:
        key = f"config.providers.{name}.class"
        try:
            cls = registry.config_provider_class(classes[name])
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        prefix = f"config.providers.{name}.param."
        params = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}
        provider = cls()
        try:
            provider.configure(params)
        except ConfigError as exc:
            raise ConfigError(f"config.providers.{name}.param: {exc}") from None
        providers[name] = provider
    return providers
