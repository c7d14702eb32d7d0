"""HoistField: wrap the whole key/value in a struct/map with one field.

``field=line`` turns ``"hello"`` into ``{"line": "hello"}``; with a schema the
result is a struct whose one field has the original schema. Null values are
wrapped too (``{"line": null}``), as Kafka does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, struct
from transforms._base import KeyOrValueTransform
from transforms._config import kafka_names
from transforms._schemas import SchemaCache


class HoistFieldConfig(PluginConfig):
    """Options of HoistField$Key / HoistField$Value."""

    field: str = Field(alias="field", min_length=1, description="Name of the wrapping field.")


class HoistField(KeyOrValueTransform):
    """Give a primitive key/value a name, so struct-only sinks and transforms accept it."""

    config_model = HoistFieldConfig
    passes_null = False

    def configure(self, props: Mapping[str, str]) -> None:
        self._field = HoistFieldConfig.from_props(props).field
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        return {self._field: data}

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        return {self._field: data}, self._schemas.get(schema, self._wrap)

    def _wrap(self, schema: Schema) -> Schema:
        return struct((self._field, schema))


class HoistFieldKey(HoistField):
    """HoistField on the record key."""

    on_key = True
    aliases = kafka_names("HoistField$Key")


class HoistFieldValue(HoistField):
    """HoistField on the record value."""

    aliases = kafka_names("HoistField$Value")
