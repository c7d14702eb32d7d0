"""Converters around the transform chain: records <-> the log's bytes.

A connector uses the worker's ``key.converter``/``value.converter``/
``header.converter`` with the worker's ``<kind>.converter.*`` settings, unless
its own config names a converter class: then that class is configured from
the connector's ``<kind>.converter.*`` keys only (as Kafka Connect does).

Each failure is raised as a :class:`StageError` naming the converter that
failed, so the error handler knows the stage without any per-record cost.

Bulk paths (:meth:`RecordConverters.to_log_many`, :meth:`RecordConverters.values_to_connect`)
convert a whole batch column by column. A converter may offer
``from_connect_many(topic, schemas, values) -> list`` and
``to_connect_many(topic, data) -> (schemas, values)`` (the bundled String and
ByteArray converters do); others are called once per value. A bulk call that
fails gives up on the whole batch, and the runner converts it record by record,
so a bad record is reported exactly as without the bulk path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_worker.runtime.error_handling import Stage, StageError
from connectors.api import (
    ConfigError,
    Converter,
    HeaderConverter,
    SinkRecord,
)
from connectors.api.records import ConnectRecord, TimestampType, columns_builder
from log_engine.client import ConsumerRecord

LogHeaders = list[tuple[str, bytes | None]]


@dataclass(frozen=True, slots=True)
class LogColumns:
    """A batch of records of one topic in the log's terms, column by column.

    ``keys``, ``headers``, ``partitions`` and ``timestamps`` are None when every
    record has none (the producer's defaults apply), as ``SyncProducer.send_many``
    takes them.
    """

    topic: str
    keys: list[bytes | None] | None
    values: list[bytes | None]
    partitions: list[int | None] | None
    timestamps: list[int | None] | None
    headers: list[LogHeaders | None] | None = None


class ConverterLookup(Protocol):
    """The part of the plugin registry converters need."""

    def converter_class(self, name: str) -> type[Converter]: ...

    def header_converter_class(self, name: str) -> type[HeaderConverter]: ...


@dataclass(frozen=True, slots=True)
class ConverterSpec:
    """A converter class name and its own properties (prefix stripped)."""

    class_name: str
    props: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConverterDefaults:
    """The worker's converters, used when a connector names none of its own."""

    key: ConverterSpec
    value: ConverterSpec
    header: ConverterSpec


def spec_for(
    kind: str, connector_props: Mapping[str, str], default: ConverterSpec
) -> ConverterSpec:
    """The converter of ``kind`` (``key``/``value``/``header``) a connector uses."""
    name = (connector_props.get(f"{kind}.converter") or "").strip()
    if not name:
        return default
    prefix = f"{kind}.converter."
    own = {k[len(prefix) :]: v for k, v in connector_props.items() if k.startswith(prefix)}
    return ConverterSpec(name, own)


class RecordConverters:
    """One task's key, value and header converters.

    Lifecycle: :meth:`build` (instantiates and configures the three; raises
    ConfigError naming the bad key) -> ``to_log``/``to_sink_record`` per record
    in the task's thread.
    """

    def __init__(self, key: Converter, value: Converter, header: HeaderConverter) -> None:
        self.key = key
        self.value = value
        self.header = header

    @classmethod
    def build(
        cls,
        registry: ConverterLookup,
        connector_props: Mapping[str, str],
        defaults: ConverterDefaults,
    ) -> RecordConverters:
        key_spec = spec_for("key", connector_props, defaults.key)
        value_spec = spec_for("value", connector_props, defaults.value)
        header_spec = spec_for("header", connector_props, defaults.header)
        key = _instance("key.converter", key_spec, registry.converter_class)
        key.configure(key_spec.props, True)
        value = _instance("value.converter", value_spec, registry.converter_class)
        value.configure(value_spec.props, False)
        header = _instance("header.converter", header_spec, registry.header_converter_class)
        header.configure(header_spec.props)
        return cls(key, value, header)

    def to_log(self, record: ConnectRecord) -> tuple[bytes | None, bytes | None, LogHeaders]:
        """Key bytes, value bytes and header bytes of a (transformed) record."""
        topic = record.topic
        try:
            key = self.key.from_connect(topic, record.key_schema, record.key)
        except Exception as exc:
            raise StageError(Stage.KEY_CONVERTER, exc) from exc
        try:
            value = self.value.from_connect(topic, record.value_schema, record.value)
        except Exception as exc:
            raise StageError(Stage.VALUE_CONVERTER, exc) from exc
        if not record.headers:
            return key, value, []
        try:
            convert = self.header.from_connect
            headers = [(name, convert(topic, name, data)) for name, data in record.headers]
        except Exception as exc:
            raise StageError(Stage.HEADER_CONVERTER, exc) from exc
        return key, value, headers

    def to_log_many(self, records: Sequence[ConnectRecord]) -> LogColumns | None:
        """The columns of records of one topic, all converted.

        None when the batch does not qualify (several topics) or some key,
        value or header failed to convert: the caller then uses :meth:`to_log`
        per record, which reports the record at fault. Headers (MQTT's, for
        one) are converted record by record, keys and values a column at a time.
        """
        count = len(records)
        topic = records[0].topic
        if [r.topic for r in records].count(topic) != count:
            return None
        try:
            keys: list[bytes | None] | None = _from_connect_column(
                self.key, topic, [r.key_schema for r in records], [r.key for r in records]
            )
            values = _from_connect_column(
                self.value, topic, [r.value_schema for r in records], [r.value for r in records]
            )
            headers = self._headers_column(topic, records)
        except Exception:
            return None
        partitions: list[int | None] | None = [r.partition for r in records]
        if partitions.count(None) == count:  # type: ignore[union-attr]
            partitions = None
        timestamps: list[int | None] | None = [r.timestamp for r in records]
        if timestamps.count(None) == count:  # type: ignore[union-attr]
            timestamps = None
        if keys.count(None) == count:  # type: ignore[union-attr]
            keys = None
        return LogColumns(topic, keys, values, partitions, timestamps, headers)

    def _headers_column(
        self, topic: str, records: Sequence[ConnectRecord]
    ) -> list[LogHeaders | None] | None:
        """Each record's converted headers (None for none); None when no record has any."""
        if not any([r.headers for r in records]):
            return None
        convert = self.header.from_connect
        out: list[LogHeaders | None] = []
        last: Any = None
        converted: LogHeaders | None = None
        for record in records:
            headers = record.headers
            if headers is not last:  # records sharing a headers tuple share its conversion
                last = headers
                converted = (
                    [(name, convert(topic, name, data)) for name, data in headers]
                    if headers else None
                )
            out.append(converted)
        return out

    def keys_to_connect(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Any], list[Any]]:
        """Key schemas and keys of one topic's raw keys (raises: use the per-record path)."""
        return _to_connect_column(self.key, topic, data)

    def values_to_connect(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Any], list[Any]]:
        """Value schemas and values of one topic's raw values (raises: use the per-record path)."""
        return _to_connect_column(self.value, topic, data)

    def to_sink_records(self, run: Sequence[ConsumerRecord]) -> list[SinkRecord] | None:
        """SinkRecords of consecutive records of one partition, converted in bulk.

        None when the run has headers or some record fails to convert: the
        caller then uses :meth:`to_sink_record` per record (same results, and the
        bad record reported as usual).
        """
        count = len(run)
        topic, partition = run[0][0], run[0][1]
        # One transposition in C (every row has the same 7 fields: strict checks cost 2x).
        _, _, offsets, timestamps, raw_keys, raw_values, raw_headers, timestamp_types = zip(
            *run, strict=False
        )
        if any(raw_headers) or timestamp_types.count(timestamp_types[0]) != count:
            return None
        try:
            if raw_keys.count(None) == count:
                key_schema, key = self.key.to_connect(topic, None)
                key_schemas: Sequence[Any] = (key_schema,) * count
                keys: Sequence[Any] = (key,) * count
            else:
                key_schemas, keys = _to_connect_column(self.key, topic, raw_keys)
            value_schemas, values = _to_connect_column(self.value, topic, raw_values)
        except Exception:
            return None
        if min(timestamps) < 0:
            timestamps = tuple(t if t >= 0 else None for t in timestamps)
        return build_sink_records(
            topic, partition, (), _TIMESTAMP_TYPES[timestamp_types[0]],
            keys, values, key_schemas, value_schemas, timestamps, offsets,
        )

    def to_sink_record(self, record: ConsumerRecord) -> SinkRecord:
        """The SinkRecord a consumed record stands for (before transforms)."""
        # One unpack: a NamedTuple's fields are properties, each access a call.
        topic, partition, offset, timestamp, raw_key, raw_value, raw_headers, timestamp_type = (
            record
        )
        try:
            key_schema, key = self.key.to_connect(topic, raw_key)
        except Exception as exc:
            raise StageError(Stage.KEY_CONVERTER, exc) from exc
        try:
            value_schema, value = self.value.to_connect(topic, raw_value)
        except Exception as exc:
            raise StageError(Stage.VALUE_CONVERTER, exc) from exc
        headers: tuple[tuple[str, Any], ...] = ()
        if raw_headers:
            try:
                convert = self.header.to_connect
                headers = tuple((name, convert(topic, name, data)) for name, data in raw_headers)
            except Exception as exc:
                raise StageError(Stage.HEADER_CONVERTER, exc) from exc
        return SinkRecord(
            topic=topic,
            partition=partition,
            key=key,
            value=value,
            key_schema=key_schema,
            value_schema=value_schema,
            headers=headers,
            timestamp=timestamp if timestamp >= 0 else None,
            kafka_offset=offset,
            timestamp_type=_TIMESTAMP_TYPES[timestamp_type],
        )


#: Kafka's timestamp type ids (a ConsumerRecord's ``timestamp_type``) as the sink API names them.
_TIMESTAMP_TYPES = {0: TimestampType.CREATE_TIME, 1: TimestampType.LOG_APPEND_TIME}

#: The SinkRecords of one partition's run: ``build_sink_records(topic, partition, headers,
#: timestamp_type, keys, values, key_schemas, value_schemas, timestamps, kafka_offsets)``.
build_sink_records = columns_builder(
    SinkRecord,
    ("key", "value", "key_schema", "value_schema", "timestamp", "kafka_offset"),
    ("topic", "partition", "headers", "timestamp_type"),
)


def _from_connect_column(
    converter: Converter, topic: str, schemas: list[Any], values: list[Any]
) -> list[bytes | None]:
    """``converter.from_connect`` over a column."""
    count = len(values)
    if values.count(None) == count and schemas.count(None) == count:
        return [converter.from_connect(topic, None, None)] * count
    many = getattr(converter, "from_connect_many", None)
    if many is not None:
        converted: list[bytes | None] = many(topic, schemas, values)
        return converted
    convert = converter.from_connect
    return [convert(topic, s, v) for s, v in zip(schemas, values, strict=True)]


def _to_connect_column(
    converter: Converter, topic: str, data: Sequence[bytes | None]
) -> tuple[list[Any], list[Any]]:
    """``converter.to_connect`` over a column: the schemas and the values."""
    many = getattr(converter, "to_connect_many", None)
    if many is not None:
        schemas, values = many(topic, data)
        return schemas, values
    convert = converter.to_connect
    pairs = [convert(topic, item) for item in data]
    return [schema for schema, _ in pairs], [value for _, value in pairs]


def _instance(key: str, spec: ConverterSpec, lookup: Any) -> Any:
    try:
        return lookup(spec.class_name)()
    except ValueError as exc:  # UnknownPluginError
        raise ConfigError(f"{key}: {exc}") from None
