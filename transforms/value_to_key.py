"""ValueToKey: make the key a struct/map of some of the value's fields.

Without a schema a missing field gives null; with one it is a DataError and
the key schema is a struct of those fields' schemas. Tombstones pass through
(they already carry the key that compaction needs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, struct
from transforms._config import CommaList, kafka_names
from transforms._records import with_key
from transforms._schemas import SchemaCache, require_dict, require_field, require_struct
from transforms.api import Transformation

_Plan = tuple[Schema, tuple[tuple[str, Any], ...]]  # key schema, (field, default)


class ValueToKeyConfig(PluginConfig):
    """Options of ValueToKey."""

    fields: CommaList = Field(
        alias="fields", min_length=1, description="Value fields that make up the key."
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="With a schema, a null field gives its schema's default, if any.",
    )


class ValueToKey(Transformation):
    """Key records by value fields, e.g. a table's primary key for compaction or upserts."""

    config_model = ValueToKeyConfig
    aliases = kafka_names("ValueToKey")

    def configure(self, props: Mapping[str, str]) -> None:
        config = ValueToKeyConfig.from_props(props)
        self._fields = config.fields
        self._null_default = config.replace_null_with_default
        self._schemas = SchemaCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value, schema = record.value, record.value_schema
        if value is None:
            return record
        if schema is None:
            value = require_dict(value, "ValueToKey")
            return with_key(record, {name: value.get(name) for name in self._fields}, None)
        value = require_struct(schema, value, "ValueToKey")
        key_schema, plan = self._schemas.get(schema, self._plan)
        key = {}
        for name, default in plan:
            field_value = value.get(name)
            key[name] = default if field_value is None else field_value
        return with_key(record, key, key_schema)

    def _plan(self, schema: Schema) -> _Plan:
        fields = [(name, require_field(schema, name, "ValueToKey").schema) for name in self._fields]
        defaults = tuple(
            (name, field_schema.default if self._null_default else None)
            for name, field_schema in fields
        )
        return struct(*fields), defaults
