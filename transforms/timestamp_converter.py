"""TimestampConverter: convert a timestamp between strings, unix times and logical types.

The whole key/value, or its ``field``, is read as one of:

- ``string``: text in the SimpleDateFormat pattern ``format`` (UTC unless the
  pattern has a zone);
- ``unix``: an integer count of ``unix.precision`` units since the epoch;
- ``Timestamp`` (aware ``datetime``), ``Date`` (``datetime.date``: midnight),
  ``Time`` (``datetime.time``: that time on 1970-01-01), Kafka's logical types;

and written as ``target.type``. Without a schema the input kind follows the
Python type (str, int, datetime, date, time); with one, the schema's type and
logical name. Values travel as microseconds since the epoch, so unix times in
micro- or nanoseconds and datetimes keep sub-millisecond precision where Kafka
would cut them to milliseconds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import ConfigError, DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, SchemaType
from transforms._base import KeyOrValueTransform
from transforms._config import invalid, kafka_names
from transforms._java_date_format import DateFormatError, JavaDateFormat
from transforms._schemas import (
    DATE,
    EPOCH,
    TIME,
    TIMESTAMP,
    SchemaCache,
    date_schema,
    primitive,
    require_dict,
    require_field,
    require_struct,
    struct_like,
    time_schema,
    timestamp_schema,
    type_name,
)

TargetType = Literal["string", "unix", "Date", "Time", "Timestamp"]
_NANOS_PER_UNIT = {"seconds": 10**9, "milliseconds": 10**6, "microseconds": 1000, "nanoseconds": 1}
_DAY_MICROS = 86_400_000_000
_EPOCH_DATE = dt.date(1970, 1, 1)


class TimestampConverterConfig(PluginConfig):
    """Options of TimestampConverter$Key / TimestampConverter$Value."""

    field: str = Field(
        "", alias="field", description="Field holding the timestamp; empty: the whole key/value."
    )
    target_type: TargetType = Field(
        alias="target.type",
        description="What to convert to: string, unix, Date, Time or Timestamp.",
    )
    format: str = Field(
        "",
        alias="format",
        description="SimpleDateFormat pattern for string input or output "
        "(e.g. yyyy-MM-dd'T'HH:mm:ss.SSSXXX); required when target.type is string.",
    )
    unix_precision: Literal["seconds", "milliseconds", "microseconds", "nanoseconds"] = Field(
        "milliseconds",
        alias="unix.precision",
        description="Unit of unix times read or written.",
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="With a schema, convert a null field's schema default instead, if any.",
    )

    @field_validator("format")
    @classmethod
    def _pattern_compiles(cls, pattern: str) -> str:
        if pattern:
            try:
                JavaDateFormat(pattern)
            except DateFormatError as exc:
                raise invalid(str(exc)) from None
        return pattern

    @model_validator(mode="after")
    def _format_for_strings(self) -> TimestampConverterConfig:
        if self.target_type == "string" and not self.format:
            raise invalid("target.type string needs format, the pattern to write")
        return self


class TimestampConverter(KeyOrValueTransform):
    """Convert timestamps between the forms sources emit and sinks expect.

    Tombstones pass through.
    """

    config_model = TimestampConverterConfig

    def configure(self, props: Mapping[str, str]) -> None:
        config = TimestampConverterConfig.from_props(props)
        self._field = config.field
        self._target: TargetType = config.target_type
        self._format = JavaDateFormat(config.format) if config.format else None
        self._unit_nanos = _NANOS_PER_UNIT[config.unix_precision]
        self._from_micros = self._writer()
        self._null_default = config.replace_null_with_default
        self._schemas = SchemaCache()

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        if not self._field:
            return self._from_micros(self._to_micros(data, None))
        if type(data) is not dict:
            data = require_dict(data, self.label)
        value = data.get(self._field)
        if value is None:
            return data
        new = data.copy()
        new[self._field] = self._from_micros(self._to_micros(value, None))
        return new

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        new_schema = self._schemas.get(schema, self._convert_schema)
        if not self._field:
            return self._from_micros(self._to_micros(data, schema)), new_schema
        value = require_struct(schema, data, self.label)
        field_schema = require_field(schema, self._field, self.label).schema
        old = value.get(self._field)
        if old is None and self._null_default:
            old = field_schema.default
        new = dict(value)
        new[self._field] = (
            None if old is None else self._from_micros(self._to_micros(old, field_schema))
        )
        return new, new_schema

    def _convert_schema(self, schema: Schema) -> Schema:
        if not self._field:
            return self._target_schema(schema.optional)
        require_struct(schema, {}, self.label)
        require_field(schema, self._field, self.label)
        fields = []
        for field in schema.fields:
            converted = field.name == self._field
            fields.append(
                (
                    field.name,
                    self._target_schema(field.schema.optional) if converted else field.schema,
                )
            )
        return struct_like(schema, fields)

    def _target_schema(self, optional: bool) -> Schema:
        builders = {
            "string": lambda o: primitive(SchemaType.STRING, o),
            "unix": lambda o: primitive(SchemaType.INT64, o),
            "Date": date_schema,
            "Time": time_schema,
            "Timestamp": timestamp_schema,
        }
        return builders[self._target](optional)

    # ---------------------------------------------------------------- values

    def _to_micros(self, value: Any, schema: Schema | None) -> int:
        """Microseconds since the epoch of a timestamp in any supported form."""
        name = schema.name if schema is not None else None
        if isinstance(value, dt.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)
            return (value - EPOCH) // dt.timedelta(microseconds=1)
        if isinstance(value, dt.date):
            return (value - _EPOCH_DATE).days * _DAY_MICROS
        if isinstance(value, dt.time):
            seconds = (value.hour * 60 + value.minute) * 60 + value.second
            return seconds * 1_000_000 + value.microsecond
        if isinstance(value, int) and not isinstance(value, bool):
            if name in (TIMESTAMP, TIME):
                return value * 1000
            if name == DATE:
                return value * _DAY_MICROS
            if schema is not None and schema.type is not SchemaType.INT64:
                raise DataError(f"{self.label}: schema type {schema.type.value} is not a unix time")
            return value * self._unit_nanos // 1000
        if isinstance(value, str):
            return self._parse(value)
        raise DataError(f"{self.label}: cannot read a timestamp from a {type_name(value)}")

    def _parse(self, text: str) -> int:
        if self._format is None:
            raise DataError(f"{self.label}: {text!r} is a string; set format to read it")
        try:
            moment = self._format.parse(text)
        except DateFormatError as exc:
            raise DataError(f"{self.label}: {exc}") from None
        return (moment - EPOCH) // dt.timedelta(microseconds=1)

    def _writer(self) -> Callable[[int], Any]:
        """The function from microseconds since the epoch to ``target.type``."""
        unit_nanos = self._unit_nanos

        def moment(micros: int) -> dt.datetime:
            return EPOCH + dt.timedelta(microseconds=micros)

        if self._target == "unix":
            return lambda micros: micros * 1000 // unit_nanos
        if self._target == "Timestamp":
            return moment
        if self._target == "Date":
            return lambda micros: moment(micros).date()
        if self._target == "Time":
            return lambda micros: moment(micros).time()
        pattern = self._format
        if pattern is None:  # the config's validator requires a format for strings
            raise ConfigError("format: required when target.type is string")
        return lambda micros: pattern.format(moment(micros))


class TimestampConverterKey(TimestampConverter):
    """TimestampConverter on the record key."""

    on_key = True
    aliases = kafka_names("TimestampConverter$Key")


class TimestampConverterValue(TimestampConverter):
    """TimestampConverter on the record value."""

    aliases = kafka_names("TimestampConverter$Value")
