"""HeaderFrom: copy or move fields of the key/value into headers.

``fields`` and ``headers`` pair up one to one: field ``fields[i]`` becomes
header ``headers[i]``. With ``operation=move`` the fields leave the key/value
(and its schema). A field missing from a schemaless map gives a null header;
with a schema it is a DataError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from transforms._config import CommaList, invalid, kafka_names
from transforms._records import with_changes
from transforms._schemas import (
    SchemaCache,
    require_dict,
    require_field,
    require_struct,
    struct_like,
)
from transforms.api import Transformation

_KEY_CHANGES = ("key", "key_schema", "headers")
_VALUE_CHANGES = ("value", "value_schema", "headers")


class HeaderFromConfig(PluginConfig):
    """Options of HeaderFrom$Key / HeaderFrom$Value."""

    fields: CommaList = Field(alias="fields", min_length=1, description="Fields to read.")
    headers: CommaList = Field(
        alias="headers", min_length=1, description="Header names, one per field, in order."
    )
    operation: Literal["move", "copy"] = Field(
        alias="operation", description="move (remove the fields) or copy (keep them)."
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="With a schema, a null field gives its schema's default, if any.",
    )

    @model_validator(mode="after")
    def _pairs(self) -> HeaderFromConfig:
        if len(self.fields) != len(self.headers):
            raise invalid(
                f"fields has {len(self.fields)} names and headers {len(self.headers)}; "
                "they pair up one to one"
            )
        return self


class HeaderFrom(Transformation):
    """Lift fields into headers, for routing or sinks that read headers.

    Tombstones pass through.
    """

    config_model = HeaderFromConfig
    on_key: ClassVar[bool] = False

    def configure(self, props: Mapping[str, str]) -> None:
        config = HeaderFromConfig.from_props(props)
        self._pairs = tuple(zip(config.fields, config.headers, strict=True))
        self._moved = frozenset(config.fields) if config.operation == "move" else frozenset()
        self._null_default = config.replace_null_with_default
        self._schemas = SchemaCache()
        self._label = self.aliases[-1] if self.aliases else type(self).__name__

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if self.on_key:
            data, schema, changes = record.key, record.key_schema, _KEY_CHANGES
        else:
            data, schema, changes = record.value, record.value_schema, _VALUE_CHANGES
        if data is None:
            return record
        if schema is None:
            data = require_dict(data, self._label)
            added = tuple((header, data.get(field)) for field, header in self._pairs)
        else:
            data = require_struct(schema, data, self._label)
            schema, defaults = self._schemas.get(schema, self._plan)
            added = tuple(
                (header, _or_default(data.get(field), defaults.get(field)))
                for field, header in self._pairs
            )
        if self._moved:
            data = {k: v for k, v in data.items() if k not in self._moved}
        return with_changes(record, changes, (data, schema, (*record.headers, *added)))

    def _plan(self, schema: Schema) -> tuple[Schema, dict[str, Any]]:
        """The schema after a move (the same for a copy) and the fields' defaults."""
        defaults = {}
        for field, _ in self._pairs:
            default = require_field(schema, field, self._label).schema.default
            if self._null_default and default is not None:
                defaults[field] = default
        if self._moved:
            kept = [(f.name, f.schema) for f in schema.fields if f.name not in self._moved]
            schema = struct_like(schema, kept)
        return schema, defaults


def _or_default(value: Any, default: Any) -> Any:
    return default if value is None else value


class HeaderFromKey(HeaderFrom):
    """HeaderFrom on the record key."""

    on_key = True
    aliases = kafka_names("HeaderFrom$Key")


class HeaderFromValue(HeaderFrom):
    """HeaderFrom on the record value."""

    aliases = kafka_names("HeaderFrom$Value")
