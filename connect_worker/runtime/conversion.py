"""Converters around the transform chain: records <-> the log's bytes.

A connector uses the worker's ``key.converter``/``value.converter``/
``header.converter`` with the worker's ``<kind>.converter.*`` settings, unless
its own config names a converter class: then that class is configured from
the connector's ``<kind>.converter.*`` keys only (as Kafka Connect does).

Each failure is raised as a :class:`StageError` naming the converter that
failed, so the error handler knows the stage without any per-record cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_worker.runtime.error_handling import Stage, StageError
from connectors.api import (
    ConfigError,
    Converter,
    HeaderConverter,
    SinkRecord,
)
from connectors.api.records import ConnectRecord
from log_engine.client import ConsumerRecord

LogHeaders = list[tuple[str, bytes | None]]


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

    def to_sink_record(self, record: ConsumerRecord) -> SinkRecord:
        """The SinkRecord a consumed record stands for (before transforms)."""
        # One unpack: a NamedTuple's fields are properties, each access a call.
        topic, partition, offset, timestamp, raw_key, raw_value, raw_headers = record
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
        )


def _instance(key: str, spec: ConverterSpec, lookup: Any) -> Any:
    try:
        return lookup(spec.class_name)()
    except ValueError as exc:  # UnknownPluginError
        raise ConfigError(f"{key}: {exc}") from None
