"""Config providers: resolve ``${provider:path:key}`` references in configs.

A worker declares providers in its properties (``config.providers=file,env``,
``config.providers.file.class=...``, ``config.providers.file.param.<k>=...``).
A connector config may then say ``connection.password=${file:/etc/db.properties:password}``
and the worker replaces the reference just before the connector starts; the
stored config, REST and logs only ever show the reference.

Lifecycle (the worker calls these from one thread)::

    configure(params) -> get(path, keys) ... get(path, keys) -> close()

- ``configure`` receives the provider's ``param.*`` properties (prefix stripped)
  and raises ConfigError for settings that cannot work.
- ``get(path, keys)`` returns the values of ``keys`` (all keys when None) found
  at ``path`` (``""`` when the reference has no path: ``${env:HOME}``). A key
  that does not exist is simply absent from the result; the worker reports it.
  Raise ConfigError when ``path`` itself cannot be read.

Third parties register providers through the ``sluice_config_providers`` hook.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

from connectors.api.config import PluginConfig


class ConfigProvider(ABC):
    """Looks up configuration values (secrets, environment) outside the config itself."""

    config_model: ClassVar[type[PluginConfig]] = PluginConfig
    aliases: ClassVar[tuple[str, ...]] = ()
    version: ClassVar[str] = "0.1.0"

    def configure(self, props: Mapping[str, str]) -> None:  # noqa: B027 - optional hook
        """Apply the provider's ``param.*`` properties (prefix already stripped)."""

    @abstractmethod
    def get(self, path: str, keys: set[str] | None = None) -> dict[str, str]:
        """The values of ``keys`` (every key when None) at ``path``; absent keys omitted."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources taken in :meth:`configure`."""
