"""JsonConverter: records as JSON, with Kafka Connect's schema envelope or bare.

``schemas.enable=true`` (the default, as in Kafka) writes and expects
``{"schema": <schema>, "payload": <value>}`` (see :mod:`.json_schema` and
:mod:`.json_values` for both halves); ``false`` writes and reads bare JSON and
yields schemaless data. A null value with no schema is a null record
(a tombstone), not the text ``null``.

Kept lean for the hot path (:mod:`.json_envelope`): a schema's envelope head
and a compiled encoder are made once per schema object, a message's schema is
recognised by its bytes, payloads are read and written by orjson, and only
logical, bytes and nested fields are converted. ``from_connect_many`` and
``to_connect_many`` convert a column of records at once (the runtime's bulk
path uses them when a converter has them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field

from connect_worker.converters.json_envelope import EnvelopeReader, EnvelopeWriter
from connectors.api import Converter, PluginConfig, Schema


class JsonConverterConfig(PluginConfig):
    """JsonConverter's keys (``key.converter.*`` / ``value.converter.*``)."""

    schemas_enable: bool = Field(
        True,
        alias="schemas.enable",
        description="Write and expect Kafka Connect's {\"schema\", \"payload\"} envelope; "
        "false for bare JSON.",
    )
    schemas_cache_size: int = Field(
        1000,
        alias="schemas.cache.size",
        ge=0,
        description="How many schemas to keep in each direction's cache.",
    )


class JsonConverter(Converter):
    """Kafka Connect's JsonConverter, wire-compatible with Kafka's."""

    config_model = JsonConverterConfig
    aliases = ("JsonConverter", "org.apache.kafka.connect.json.JsonConverter")
    version: ClassVar[str] = "0.1.0"

    def __init__(self) -> None:
        self.configure({})

    def configure(self, props: Mapping[str, str], is_key: bool = False) -> None:
        self._config = JsonConverterConfig.from_props(props)
        enabled, size = self._config.schemas_enable, self._config.schemas_cache_size
        self._writer = EnvelopeWriter(enabled, size)
        self._reader = EnvelopeReader(enabled, size)

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        return self._writer.write(topic, schema, value)

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        if data is None:
            return None, None
        return self._reader.read(topic, data)

    def from_connect_many(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """``from_connect`` over a column of records (the first DataError stops it)."""
        write = self._writer.write
        return [
            None if schema is None and value is None else write(topic, schema, value)
            for schema, value in zip(schemas, values, strict=True)
        ]

    def to_connect_many(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Schema | None], list[Any]]:
        """``to_connect`` over a column of records: their schemas and their values."""
        read = self._reader.read
        schemas: list[Schema | None] = []
        values: list[Any] = []
        add_schema, add_value = schemas.append, values.append
        for item in data:
            schema, value = (None, None) if item is None else read(topic, item)
            add_schema(schema)
            add_value(value)
        return schemas, values
