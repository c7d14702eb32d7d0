"""JsonConverter: records as JSON, with Kafka Connect's schema envelope or bare.

``schemas.enable=true`` (the default, as in Kafka) writes and expects
``{"schema": <schema>, "payload": <value>}`` (see :mod:`.json_schema` and
:mod:`.json_values` for both halves); ``false`` writes and reads bare JSON and
yields schemaless data. A null value with no schema is a null record
(a tombstone), not the text ``null``.

Kept lean for the hot path: a schema's JSON text is computed once and cached
(per schema object), strings take a fast path, and parsed envelope schemas are
cached by their text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from connect_worker.converters.json_schema import schema_from_json, schema_to_json
from connect_worker.converters.json_values import (
    from_json_value,
    infer_json_value,
    to_json_value,
)
from connectors.api import Converter, DataError, PluginConfig, Schema, SchemaType

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True)
_ENVELOPE_HINT = (
    "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may "
    "not contain additional fields. If you are trying to deserialize plain JSON data, "
    "set schemas.enable=false in your converter configuration."
)


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
        self._config = JsonConverterConfig.model_validate({})
        self._schema_text: dict[int, tuple[Schema, str]] = {}
        self._parsed: dict[str, Schema] = {}

    def configure(self, props: Mapping[str, str], is_key: bool = False) -> None:
        self._config = JsonConverterConfig.from_props(props)
        self._schema_text.clear()
        self._parsed.clear()

    # ---------------------------------------------------------------- write

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        if schema is None:
            payload = infer_json_value(value)
        elif schema.type is SchemaType.STRING and schema.name is None and type(value) is str:
            payload = value
        else:
            payload = to_json_value(schema, value)
        try:
            payload_text = _ENCODER.encode(payload)
        except (TypeError, ValueError) as exc:
            raise DataError(f"cannot write JSON for topic {topic}: {exc}") from None
        if not self._config.schemas_enable:
            return payload_text.encode("utf-8")
        schema_text = "null" if schema is None else self._schema_json(schema)
        return f'{{"schema":{schema_text},"payload":{payload_text}}}'.encode()

    def _schema_json(self, schema: Schema) -> str:
        cached = self._schema_text.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        text = _ENCODER.encode(schema_to_json(schema))
        if len(self._schema_text) >= self._config.schemas_cache_size:
            self._schema_text.clear()
        if self._config.schemas_cache_size:
            # The schema object is kept alive by the cache, so its id cannot be reused.
            self._schema_text[id(schema)] = (schema, text)
        return text

    # ----------------------------------------------------------------- read

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        if data is None:
            return None, None
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise DataError(
                f"Converting byte[] to Kafka Connect data failed due to serialization error "
                f"of topic {topic}: not valid JSON ({exc})"
            ) from None
        if not self._config.schemas_enable or parsed is None:
            return None, parsed
        if type(parsed) is not dict or len(parsed) != 2 or not (
            "schema" in parsed and "payload" in parsed
        ):
            raise DataError(f"topic {topic}: {_ENVELOPE_HINT}")
        raw_schema, payload = parsed["schema"], parsed["payload"]
        if raw_schema is None:
            return None, payload
        schema = self._parse_schema(raw_schema)
        return schema, from_json_value(schema, payload)

    def _parse_schema(self, raw: Any) -> Schema:
        key = repr(raw)
        schema = self._parsed.get(key)
        if schema is None:
            schema = schema_from_json(raw)
            if len(self._parsed) >= self._config.schemas_cache_size:
                self._parsed.clear()
            if self._config.schemas_cache_size:
                self._parsed[key] = schema
        return schema
