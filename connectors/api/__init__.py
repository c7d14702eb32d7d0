"""The plugin API: everything a connector author imports, and nothing else.

Plugins see only this package (and ``transforms.api``); they never import the
runtime (``connect_worker``) or the log engine. Lifecycle contracts are written
in each base class's module docstring.
"""

from connectors.api.config import PluginConfig, describe_errors, key_info
from connectors.api.connector import Connector, ConnectorContext
from connectors.api.converter import Converter, HeaderConverter
from connectors.api.errors import ConfigError, ConnectError, DataError, RetriableError
from connectors.api.hookspecs import SluiceHookSpecs, hookimpl, hookspec
from connectors.api.metrics import Counter, Gauge, TaskMetrics
from connectors.api.records import (
    ConnectRecord,
    Header,
    SinkRecord,
    SourceRecord,
    TimestampType,
    TopicPartition,
    source_records,
)
from connectors.api.schema import Field, Schema, SchemaType, struct
from connectors.api.sink import SinkConnector, SinkTask, SinkTaskContext
from connectors.api.source import OffsetReader, SourceConnector, SourceTask, SourceTaskContext

__all__ = [
    "ConfigError",
    "ConnectError",
    "ConnectRecord",
    "Connector",
    "ConnectorContext",
    "Converter",
    "Counter",
    "DataError",
    "Field",
    "Gauge",
    "Header",
    "HeaderConverter",
    "OffsetReader",
    "PluginConfig",
    "RetriableError",
    "Schema",
    "SchemaType",
    "SinkConnector",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SluiceHookSpecs",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "TaskMetrics",
    "TimestampType",
    "TopicPartition",
    "describe_errors",
    "hookimpl",
    "hookspec",
    "key_info",
    "source_records",
    "struct",
]
