"""SetSchemaMetadata: set the name and/or version of the key/value schema.

Needs records with schemas (a schemaless key/value is a DataError; a null one
without a schema passes). The data itself does not change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from transforms._base import KeyOrValueTransform
from transforms._config import invalid, kafka_names
from transforms._schemas import SchemaCache


class SetSchemaMetadataConfig(PluginConfig):
    """Options of SetSchemaMetadata$Key / SetSchemaMetadata$Value."""

    schema_name: str | None = Field(
        None, alias="schema.name", min_length=1, description="The schema's new name."
    )
    schema_version: int | None = Field(
        None, alias="schema.version", ge=1, description="The schema's new version."
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="Accepted for compatibility with Kafka; values are not touched here.",
    )

    @model_validator(mode="after")
    def _something_to_set(self) -> SetSchemaMetadataConfig:
        if self.schema_name is None and self.schema_version is None:
            raise invalid("set schema.name, schema.version or both")
        return self


class SetSchemaMetadata(KeyOrValueTransform):
    """Name and version a schema, e.g. for a registry subject or a sink's table naming."""

    config_model = SetSchemaMetadataConfig
    passes_null = False

    def configure(self, props: Mapping[str, str]) -> None:
        config = SetSchemaMetadataConfig.from_props(props)
        changes: dict[str, Any] = {}
        if config.schema_name is not None:
            changes["name"] = config.schema_name
        if config.schema_version is not None:
            changes["version"] = config.schema_version
        self._changes = changes
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        if data is None:
            return None
        part = "key" if self.on_key else "value"
        raise DataError(f"{self.label}: the record's {part} has no schema to update")

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        return data, self._schemas.get(schema, self._update)

    def _update(self, schema: Schema) -> Schema:
        return dataclasses.replace(schema, **self._changes)


class SetSchemaMetadataKey(SetSchemaMetadata):
    """SetSchemaMetadata on the record key."""

    on_key = True
    aliases = kafka_names("SetSchemaMetadata$Key")


class SetSchemaMetadataValue(SetSchemaMetadata):
    """SetSchemaMetadata on the record value."""

    aliases = kafka_names("SetSchemaMetadata$Value")
