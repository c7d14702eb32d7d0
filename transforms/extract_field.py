"""ExtractField: replace a struct/map key or value with one of its fields.

With ``field.syntax.version=V1`` (the default) ``field`` is one field name,
dots included. With ``V2`` it is a dotted path into nested structs or maps
(``after.address.city``); a name containing dots is written in backticks
(``after.`user.name```), and a backtick inside backticks is escaped with a
backslash. Without a schema a missing field gives null; with one it is a
DataError, and the result takes the field's schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from transforms._base import KeyOrValueTransform
from transforms._config import invalid, kafka_names
from transforms._schemas import SchemaCache, require_dict, require_field, require_struct


def parse_path(path: str) -> tuple[str, ...]:
    """A V2 field path as its names; raises ``invalid`` for an empty or unclosed part."""
    names: list[str] = []
    i = 0
    while True:
        if path.startswith("`", i):
            name, i = _quoted(path, i + 1)
        else:
            end = path.find(".", i)
            end = len(path) if end < 0 else end
            name, i = path[i:end], end
        if not name:
            raise invalid(f"{path!r} has an empty field name")
        names.append(name)
        if i >= len(path):
            return tuple(names)
        if path[i] != ".":
            raise invalid(f"{path!r}: expected '.' after the backticked name {name!r}")
        i += 1
        if i == len(path):
            raise invalid(f"{path!r} ends with '.'")


def _quoted(path: str, i: int) -> tuple[str, int]:
    """The backticked name starting at ``i`` and the index after its closing backtick."""
    chars = []
    while i < len(path):
        char = path[i]
        if char == "\\" and i + 1 < len(path):
            chars.append(path[i + 1])
            i += 2
        elif char == "`":
            return "".join(chars), i + 1
        else:
            chars.append(char)
            i += 1
    raise invalid(f"{path!r} has an unclosed backtick")


class ExtractFieldConfig(PluginConfig):
    """Options of ExtractField$Key / ExtractField$Value."""

    field: str = Field(
        alias="field", min_length=1, description="The field to extract (a dotted path with V2)."
    )
    field_syntax_version: Literal["V1", "V2"] = Field(
        "V1",
        alias="field.syntax.version",
        description="V1: `field` is one name; V2: a dotted path into nested fields.",
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="With a schema, a null field gives its schema's default, if any.",
    )

    @model_validator(mode="after")
    def _path_parses(self) -> ExtractFieldConfig:
        if self.field_syntax_version == "V2":
            parse_path(self.field)
        return self


class ExtractField(KeyOrValueTransform):
    """Pull one field out, e.g. the id of a struct key, or a nested payload.

    Tombstones pass through.
    """

    config_model = ExtractFieldConfig

    def configure(self, props: Mapping[str, str]) -> None:
        config = ExtractFieldConfig.from_props(props)
        v2 = config.field_syntax_version == "V2"
        self._path = parse_path(config.field) if v2 else (config.field,)
        self._null_default = config.replace_null_with_default
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        data = require_dict(data, self.label)
        for name in self._path:
            if not isinstance(data, dict):
                return None
            data = data.get(name)
        return data

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        require_struct(schema, data, self.label)
        field_schema = self._schemas.get(schema, self._field_schema)
        for name in self._path:
            data = data.get(name) if isinstance(data, dict) else None
        if data is None and self._null_default:
            data = field_schema.default
        return data, field_schema

    def _field_schema(self, schema: Schema) -> Schema:
        """The extracted field's schema; optional if a struct on the way there is."""
        optional_parent = False
        for depth, name in enumerate(self._path):
            if depth:
                where = ".".join(self._path[:depth])
                require_struct(schema, {}, f"{self.label} (at {where})")
                optional_parent = optional_parent or schema.optional
            schema = require_field(schema, name, self.label).schema
        return schema.as_optional() if optional_parent else schema


class ExtractFieldKey(ExtractField):
    """ExtractField on the record key."""

    on_key = True
    aliases = kafka_names("ExtractField$Key")


class ExtractFieldValue(ExtractField):
    """ExtractField on the record value."""

    aliases = kafka_names("ExtractField$Value")
