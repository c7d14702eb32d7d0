"""ReplaceField: keep, drop and rename the fields of a struct or map.

``exclude`` wins over ``include``; ``renames`` applies to the fields kept.
Kafka's older names ``blacklist``/``whitelist`` are accepted. With a schema
the new schema keeps the fields' order; without one (Kafka's maps have no
order) a renamed key moves to the end, which keeps the per-record path to a
dict copy and a few key moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, Field, field_validator, model_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from transforms._base import KeyOrValueTransform
from transforms._config import CommaList, invalid, kafka_names, parse_pairs
from transforms._schemas import SchemaCache, require_dict, require_struct, struct_like

_Plan = tuple[Schema, tuple[tuple[str, str, Any], ...]]  # new schema, (old, new, default)


class ReplaceFieldConfig(PluginConfig):
    """Options of ReplaceField$Key / ReplaceField$Value."""

    exclude: CommaList = Field(
        (),
        alias="exclude",
        validation_alias=AliasChoices("exclude", "blacklist"),
        description="Fields to drop (formerly `blacklist`).",
    )
    include: CommaList = Field(
        (),
        alias="include",
        validation_alias=AliasChoices("include", "whitelist"),
        description="Fields to keep; empty keeps all (formerly `whitelist`).",
    )
    renames: CommaList = Field(
        (), alias="renames", description="Renames as `old:new` pairs, e.g. `a:b,c:d`."
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="With a schema, replace a null field by its schema's default, if any.",
    )

    @field_validator("renames")
    @classmethod
    def _renames_are_pairs(cls, renames: tuple[str, ...]) -> tuple[str, ...]:
        pairs = parse_pairs(renames, "rename")
        olds = [old for old, _ in pairs]
        news = [new for _, new in pairs]
        for names, what in ((olds, "renamed twice"), (news, "the target of two renames")):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise invalid(f"{', '.join(twice)}: {what}")
        return renames

    @model_validator(mode="after")
    def _include_exclude_disjoint(self) -> ReplaceFieldConfig:
        both = sorted(set(self.include) & set(self.exclude))
        if both:
            raise invalid(f"include and exclude both list {', '.join(both)}")
        return self


class ReplaceField(KeyOrValueTransform):
    """Drop, keep and rename fields: the usual fix for a sink's column names.

    Tombstones pass through.
    """

    config_model = ReplaceFieldConfig

    def configure(self, props: Mapping[str, str]) -> None:
        config = ReplaceFieldConfig.from_props(props)
        self._exclude = frozenset(config.exclude)
        self._include = frozenset(config.include)
        self._renames = dict(parse_pairs(config.renames, "rename"))
        self._rename_items = tuple(self._renames.items())
        self._null_default = config.replace_null_with_default
        self._schemas = SchemaCache()

    def keeps(self, name: str) -> bool:
        """Whether field ``name`` survives include/exclude."""
        return name not in self._exclude and (not self._include or name in self._include)

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        if type(data) is not dict:
            data = require_dict(data, self.label)
        if self._include:
            new = {k: v for k, v in data.items() if k in self._include and k not in self._exclude}
        else:
            new = data.copy()
            for name in self._exclude:
                new.pop(name, None)
        for old, renamed in self._rename_items:
            if old in new:
                new[renamed] = new.pop(old)
        return new

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        value = require_struct(schema, data, self.label)
        new_schema, plan = self._schemas.get(schema, self._plan)
        get = value.get
        if self._null_default:
            new = {}
            for old, renamed, default in plan:
                field_value = get(old)
                new[renamed] = default if field_value is None else field_value
        else:
            new = {renamed: get(old) for old, renamed, _ in plan}
        return new, new_schema

    def _plan(self, schema: Schema) -> _Plan:
        require_struct(schema, {}, self.label)
        plan = tuple(
            (f.name, self._renames.get(f.name, f.name), f.schema.default)
            for f in schema.fields
            if self.keeps(f.name)
        )
        names = [renamed for _, renamed, _ in plan]
        if len(set(names)) != len(names):
            clash = sorted({n for n in names if names.count(n) > 1})
            raise DataError(f"{self.label}: renames give two fields the name {clash[0]!r}")
        by_name = {f.name: f.schema for f in schema.fields}
        fields = [(renamed, by_name[old]) for old, renamed, _ in plan]
        return struct_like(schema, fields), plan


class ReplaceFieldKey(ReplaceField):
    """ReplaceField on the record key."""

    on_key = True
    aliases = kafka_names("ReplaceField$Key")


class ReplaceFieldValue(ReplaceField):
    """ReplaceField on the record value."""

    aliases = kafka_names("ReplaceField$Value")
