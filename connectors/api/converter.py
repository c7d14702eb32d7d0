"""Converters: between a record's Python key/value/headers and the log's bytes.

The worker applies ``key.converter`` and ``value.converter`` (and the header
converter) around the transform chain; plugins never see bytes they did not
ask for. Third parties register converters through the ``sluice_converters``
hook, like the bundled JsonConverter, StringConverter and ByteArrayConverter.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from connectors.api.config import PluginConfig
from connectors.api.schema import Schema


class Converter(ABC):
    """Converts one side (key or value) of records; configured once per use."""

    config_model: ClassVar[type[PluginConfig]] = PluginConfig
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, props: Mapping[str, str], is_key: bool) -> None:  # noqa: B027
        """Apply the converter's own properties (prefix already stripped)."""

    @abstractmethod
    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialize; raise DataError when ``value`` does not fit."""

    @abstractmethod
    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        """Deserialize; raise DataError for bytes that are not in this format."""


class HeaderConverter(ABC):
    """Converts header values between Python data and bytes."""

    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, props: Mapping[str, str]) -> None:  # noqa: B027
        """Apply the converter's own properties."""

    @abstractmethod
    def from_connect(self, topic: str, name: str, value: Any) -> bytes | None: ...

    @abstractmethod
    def to_connect(self, topic: str, name: str, data: bytes | None) -> Any: ...
