"""InsertField: add the record's topic, partition, offset, timestamp or a constant.

Each option names the field to insert; a ``!`` suffix makes the field required
in the new schema, ``?`` (the default) optional. With a schema the new fields
are appended to the struct (topic and static value as strings, partition as
int32, offset as int64, timestamp as Kafka's Timestamp logical type). Without
one the timestamp is inserted as ms since the epoch, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import Field, model_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, SchemaType
from transforms._base import KeyOrValueTransform
from transforms._config import invalid, kafka_names
from transforms._schemas import (
    SchemaCache,
    datetime_from_ms,
    field_pairs,
    primitive,
    require_dict,
    require_struct,
    struct_like,
    timestamp_schema,
)

_SUFFIX_HELP = "Suffix '!' makes the field required in the schema, '?' optional (the default)."


class InsertFieldConfig(PluginConfig):
    """Options of InsertField$Key / InsertField$Value."""

    topic_field: str | None = Field(
        None, alias="topic.field", description=f"Field for the record's topic. {_SUFFIX_HELP}"
    )
    partition_field: str | None = Field(
        None,
        alias="partition.field",
        description=f"Field for the record's partition. {_SUFFIX_HELP}",
    )
    offset_field: str | None = Field(
        None,
        alias="offset.field",
        description=f"Field for the record's log offset (sink records only). {_SUFFIX_HELP}",
    )
    timestamp_field: str | None = Field(
        None,
        alias="timestamp.field",
        description=f"Field for the record's timestamp. {_SUFFIX_HELP}",
    )
    static_field: str | None = Field(
        None,
        alias="static.field",
        description=f"Field for the constant `static.value`. {_SUFFIX_HELP}",
    )
    static_value: str | None = Field(
        None, alias="static.value", description="The constant inserted as `static.field`."
    )

    @model_validator(mode="after")
    def _something_to_insert(self) -> InsertFieldConfig:
        names = (
            self.topic_field,
            self.partition_field,
            self.offset_field,
            self.timestamp_field,
            self.static_field,
        )
        if not any(names):
            raise invalid(
                "nothing to insert: set at least one of topic.field, partition.field, "
                "offset.field, timestamp.field, static.field"
            )
        if self.static_value is not None and not self.static_field:
            raise invalid("static.value is set but static.field, the field to put it in, is not")
        for name in names:
            if name and name.rstrip("!?") == "":
                raise invalid(f"{name!r} is not a field name")
        return self


class _Spec(NamedTuple):
    name: str
    required: bool


def _spec(raw: str | None) -> _Spec | None:
    if not raw:
        return None
    if raw.endswith("!"):
        return _Spec(raw[:-1], True)
    return _Spec(raw.removesuffix("?"), False)


class InsertField(KeyOrValueTransform):
    """Insert record metadata or a constant into a struct or map key/value.

    Sinks often need to know where a row came from (topic, partition, offset)
    or to tag it; this adds those as fields. Tombstones pass through.
    """

    config_model = InsertFieldConfig

    def configure(self, props: Mapping[str, str]) -> None:
        config = InsertFieldConfig.from_props(props)
        self._topic = _spec(config.topic_field)
        self._partition = _spec(config.partition_field)
        self._offset = _spec(config.offset_field)
        self._timestamp = _spec(config.timestamp_field)
        self._static = _spec(config.static_field)
        self._static_value = config.static_value
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        if type(data) is not dict:
            data = require_dict(data, self.label)
        new = data.copy()
        if self._topic is not None:
            new[self._topic.name] = record.topic
        if self._partition is not None and record.partition is not None:
            new[self._partition.name] = record.partition
        if self._offset is not None:
            new[self._offset.name] = self._offset_of(record)
        if self._timestamp is not None and record.timestamp is not None:
            new[self._timestamp.name] = record.timestamp
        if self._static is not None:
            new[self._static.name] = self._static_value
        return new

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        value = require_struct(schema, data, self.label)
        new_schema = self._schemas.get(schema, self._build_schema)
        new = dict(value)
        timestamp = record.timestamp
        inserts = (
            (self._topic, record.topic),
            (self._partition, record.partition),
            (self._offset, self._offset_of(record) if self._offset is not None else None),
            (self._timestamp, None if timestamp is None else datetime_from_ms(timestamp)),
            (self._static, self._static_value),
        )
        for spec, field_value in inserts:
            if spec is None:
                continue
            if field_value is None and spec.required:
                raise DataError(f"{self.label}: required field {spec.name!r} has no value")
            new[spec.name] = field_value
        return new, new_schema

    def _offset_of(self, record: ConnectRecord) -> int:
        offset = getattr(record, "kafka_offset", None)
        if offset is None or offset < 0:
            raise DataError(
                f"{self.label}: offset.field needs a sink record (one read from the log); "
                f"got a {type(record).__name__} without an offset"
            )
        return int(offset)

    def _build_schema(self, schema: Schema) -> Schema:
        if schema.type is not SchemaType.STRUCT:
            raise DataError(f"{self.label}: expected a struct schema, got {schema.type.value}")
        fields = field_pairs(schema)
        added = (
            (self._topic, primitive(SchemaType.STRING)),
            (self._partition, primitive(SchemaType.INT32)),
            (self._offset, primitive(SchemaType.INT64)),
            (self._timestamp, timestamp_schema()),
            (self._static, primitive(SchemaType.STRING)),
        )
        existing = {name for name, _ in fields}
        for spec, field_schema in added:
            if spec is None:
                continue
            if spec.name in existing:
                raise DataError(f"{self.label}: the schema already has a field {spec.name!r}")
            existing.add(spec.name)
            optional = not spec.required
            fields.append((spec.name, field_schema.as_optional() if optional else field_schema))
        return struct_like(schema, fields)


class InsertFieldKey(InsertField):
    """InsertField on the record key."""

    on_key = True
    aliases = kafka_names("InsertField$Key")


class InsertFieldValue(InsertField):
    """InsertField on the record value."""

    aliases = kafka_names("InsertField$Value")
