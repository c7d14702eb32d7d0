"""Flatten: turn nested structs/maps into one level, joining names with ``delimiter``.

``{"a": {"b": 1}, "c": 2}`` becomes ``{"a.b": 1, "c": 2}``. Arrays and
(with a schema) maps are kept as they are; without a schema every nested dict
is flattened, and an empty one disappears. With a schema a nested field is
optional in the flat schema if it or any struct above it is; a null struct
gives nulls for all its fields. Two paths that flatten to the same name are a
DataError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, SchemaType
from transforms._base import KeyOrValueTransform
from transforms._config import kafka_names
from transforms._schemas import SchemaCache, require_dict, require_struct, struct_like

_Leaf = tuple[str, tuple[str, ...], Any]  # flat name, path, default
_Plan = tuple[Schema, tuple[_Leaf, ...]]


class FlattenConfig(PluginConfig):
    """Options of Flatten$Key / Flatten$Value."""

    delimiter: str = Field(
        ".", alias="delimiter", description="Put between the names of nested fields."
    )


class Flatten(KeyOrValueTransform):
    """Flatten nested data for sinks with flat rows (JDBC tables, CSV).

    Tombstones pass through.
    """

    config_model = FlattenConfig

    def configure(self, props: Mapping[str, str]) -> None:
        self._delimiter = FlattenConfig.from_props(props).delimiter
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        flat: dict[str, Any] = {}
        self._flatten_map(require_dict(data, self.label), "", flat)
        return flat

    def _flatten_map(self, data: Mapping[Any, Any], prefix: str, flat: dict[str, Any]) -> None:
        for key, value in data.items():
            name = prefix + str(key)
            if isinstance(value, dict):
                self._flatten_map(value, name + self._delimiter, flat)
            elif name in flat:
                raise DataError(f"{self.label}: two fields flatten to the name {name!r}")
            else:
                flat[name] = value

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        value = require_struct(schema, data, self.label)
        flat_schema, leaves = self._schemas.get(schema, self._plan)
        flat = {}
        for name, path, default in leaves:
            node: Any = value
            for step in path:
                node = node.get(step) if node is not None else None
            flat[name] = default if node is None else node
        return flat, flat_schema

    def _plan(self, schema: Schema) -> _Plan:
        require_struct(schema, {}, self.label)
        fields: list[tuple[str, Schema]] = []
        leaves: list[_Leaf] = []
        self._plan_struct(schema, (), False, fields, leaves)
        names = [name for name, _ in fields]
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise DataError(f"{self.label}: two fields flatten to the name {twice!r}")
        return struct_like(schema, fields), tuple(leaves)

    def _plan_struct(
        self,
        schema: Schema,
        path: tuple[str, ...],
        optional: bool,
        fields: list[tuple[str, Schema]],
        leaves: list[_Leaf],
    ) -> None:
        for field in schema.fields:
            field_path = (*path, field.name)
            field_optional = optional or field.schema.optional
            if field.schema.type is SchemaType.STRUCT:
                self._plan_struct(field.schema, field_path, field_optional, fields, leaves)
                continue
            name = self._delimiter.join(field_path)
            field_schema = field.schema.as_optional() if field_optional else field.schema
            fields.append((name, field_schema))
            leaves.append((name, field_path, field_schema.default))


class FlattenKey(Flatten):
    """Flatten on the record key."""

    on_key = True
    aliases = kafka_names("Flatten$Key")


class FlattenValue(Flatten):
    """Flatten on the record value."""

    aliases = kafka_names("Flatten$Value")
