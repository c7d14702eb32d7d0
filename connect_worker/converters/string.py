"""StringConverter: values as text in one encoding (UTF-8 by default).

Writing: ``str`` is encoded, ``bytes`` pass through, anything else is written
as ``str(value)`` (Kafka writes ``toString()``); None stays a null record.
Reading always yields an optional string schema, as Kafka's does.
``from_connect_many``/``to_connect_many`` do the same for a batch of values
(the runtime's bulk path, see :mod:`connect_worker.runtime.conversion`).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, field_validator

from connectors.api import Converter, DataError, PluginConfig, Schema, SchemaType

OPTIONAL_STRING = Schema(SchemaType.STRING, optional=True)


class StringConverterConfig(PluginConfig):
    """StringConverter's keys."""

    encoding: str = Field(
        "utf-8",
        alias="converter.encoding",
        description="The character encoding of the bytes (any Python codec name, e.g. UTF-8).",
    )

    @field_validator("encoding")
    @classmethod
    def _known_codec(cls, value: str) -> str:
        try:
            return codecs.lookup(value).name
        except LookupError:
            raise ValueError(f"unknown encoding {value!r}") from None


class StringConverter(Converter):
    """Kafka's StringConverter: text in ``converter.encoding``."""

    config_model = StringConverterConfig
    aliases = ("StringConverter", "org.apache.kafka.connect.storage.StringConverter")

    def __init__(self) -> None:
        self._encoding = "utf-8"

    def configure(self, props: Mapping[str, str], is_key: bool = False) -> None:
        self._encoding = StringConverterConfig.from_props(props).encoding

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if type(value) is str:
            try:
                return value.encode(self._encoding)
            except UnicodeEncodeError as exc:
                message = f"topic {topic}: cannot encode as {self._encoding}: {exc}"
                raise DataError(message) from None
        if value is None:
            return None
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        return str(value).encode(self._encoding, errors="replace")

    def from_connect_many(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for many values (one comprehension when all are text)."""
        encoding = self._encoding
        try:
            return [value.encode(encoding) for value in values]
        except (AttributeError, UnicodeError):  # not all text, or not encodable: one by one
            convert = self.from_connect
            pairs = zip(schemas, values, strict=True)
        return [convert(topic, schema, value) for schema, value in pairs]

    def to_connect_many(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Schema | None], list[Any]]:
        """:meth:`to_connect` for many values: their schemas and values."""
        encoding = self._encoding
        try:
            values = [item.decode(encoding) for item in data]  # type: ignore[union-attr]
        except (AttributeError, UnicodeError):  # a null, or bad bytes: one by one
            pairs = [self.to_connect(topic, item) for item in data]
            return [schema for schema, _ in pairs], [value for _, value in pairs]
        return [OPTIONAL_STRING] * len(values), values

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        if data is None:
            return OPTIONAL_STRING, None
        try:
            return OPTIONAL_STRING, data.decode(self._encoding)
        except UnicodeDecodeError as exc:
            raise DataError(f"topic {topic}: bytes are not {self._encoding} text: {exc}") from None
