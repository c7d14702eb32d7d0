"""Cast: change the type of a whole key/value or of some struct/map fields.

``spec`` is one type (cast the whole key or value, which must be a primitive)
or ``field:type`` pairs. Target types: int8, int16, int32, int64, float32,
float64, boolean, string. Inputs may be any of those, bytes (to string:
base64), decimals, and dates, times and timestamps (to string: ISO 8601 in
UTC, as Kafka formats them). With a schema the cast fields' schemas change
type and keep their optionality (a cast logical type becomes a plain one).

Where Kafka would silently wrap an out-of-range integer (300 as int8 is 44)
or read any string but "true" as false, we raise DataError instead: the
record goes to the dead-letter queue rather than downstream corrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field, field_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, SchemaType
from transforms._base import KeyOrValueTransform
from transforms._casting import CASTERS, TARGET_TYPES, CastError
from transforms._config import CommaList, invalid, kafka_names, parse_pairs
from transforms._schemas import PRIMITIVES, SchemaCache, require_dict, require_struct, struct_like


def parse_spec(items: tuple[str, ...]) -> SchemaType | tuple[tuple[str, SchemaType], ...]:
    """A whole-value target type, or ``(field, type)`` pairs; raises ``invalid``."""
    if len(items) == 1 and ":" not in items[0]:
        return _target(items[0])
    return tuple((name, _target(kind)) for name, kind in parse_pairs(items, "field:type pair"))


def _target(name: str) -> SchemaType:
    kind = TARGET_TYPES.get(name.strip())
    if kind is None:
        known = ", ".join(TARGET_TYPES)
        raise invalid(f"unknown type {name!r} (one of {known})")
    return kind


class CastConfig(PluginConfig):
    """Options of Cast$Key / Cast$Value."""

    spec: CommaList = Field(
        alias="spec",
        min_length=1,
        description="One type to cast the whole key/value to, or `field:type` pairs "
        "(`a:int32,b:string`). Types: int8, int16, int32, int64, float32, float64, "
        "boolean, string.",
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="With a schema, replace a null field by its schema's default before casting.",
    )

    @field_validator("spec")
    @classmethod
    def _valid_spec(cls, spec: tuple[str, ...]) -> tuple[str, ...]:
        parse_spec(spec)
        return spec


class Cast(KeyOrValueTransform):
    """Cast fields or the whole key/value to another primitive type.

    Fixes type mismatches between a source and a sink (a numeric string to an
    int column, an int id to a string key). Tombstones pass through.
    """

    config_model = CastConfig

    def configure(self, props: Mapping[str, str]) -> None:
        config = CastConfig.from_props(props)
        spec = parse_spec(config.spec)
        self._whole: SchemaType | None = spec if isinstance(spec, SchemaType) else None
        pairs = () if isinstance(spec, SchemaType) else spec
        self._targets = dict(pairs)  # field -> target type
        self._field_casts = tuple((name, CASTERS[kind]) for name, kind in pairs)
        self._null_default = config.replace_null_with_default
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        if self._whole is not None:
            return self._cast(CASTERS[self._whole], data, "the value")
        if type(data) is not dict:
            data = require_dict(data, self.label)
        new = data.copy()
        for name, cast in self._field_casts:
            value = new.get(name)
            if value is not None:
                try:
                    new[name] = cast(value)
                except CastError as exc:
                    raise DataError(f"{self.label}: field {name!r}: {exc}") from None
        return new

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        new_schema = self._schemas.get(schema, self._cast_schema)
        if self._whole is not None:
            return self._cast(CASTERS[self._whole], data, "the value"), new_schema
        value = require_struct(schema, data, self.label)
        new = dict(value)
        for field in schema.fields:
            name = field.name
            if new.get(name) is None and self._null_default and field.schema.default is not None:
                new[name] = field.schema.default
            target = self._targets.get(name)
            if target is not None:
                new[name] = self._cast(CASTERS[target], new.get(name), f"field {name!r}")
        return new, new_schema

    def _cast(self, cast: Callable[[Any], Any], value: Any, where: str) -> Any:
        if value is None:
            return None
        try:
            return cast(value)
        except CastError as exc:
            raise DataError(f"{self.label}: {where}: {exc}") from None

    def _cast_schema(self, schema: Schema) -> Schema:
        if self._whole is not None:
            return self._target_schema(schema, self._whole, "the value")
        require_struct(schema, {}, self.label)
        fields = []
        for field in schema.fields:
            target = self._targets.get(field.name)
            if target is not None:
                fields.append(
                    (field.name, self._target_schema(field.schema, target, f"field {field.name!r}"))
                )
            else:
                fields.append((field.name, field.schema))
        return struct_like(schema, fields)

    def _target_schema(self, schema: Schema, target: SchemaType, where: str) -> Schema:
        """``schema`` cast to ``target``: same optionality and doc, default cast too."""
        if schema.type not in PRIMITIVES:
            raise DataError(
                f"{self.label}: {where} is a {schema.type.value}; only primitives can be cast"
            )
        default = self._cast(CASTERS[target], schema.default, f"{where}'s default")
        return Schema(target, optional=schema.optional, doc=schema.doc, default=default)


class CastKey(Cast):
    """Cast on the record key."""

    on_key = True
    aliases = kafka_names("Cast$Key")


class CastValue(Cast):
    """Cast on the record value."""

    aliases = kafka_names("Cast$Value")
