"""Keys of a connector config that nothing reads, so that users hear about them.

Kafka Connect passes keys it does not know on without a word, and so do we:
a config copied from Kafka Connect may carry keys of an option Sluice does
not implement (a Confluent JDBC or Debezium key, say), or a typo. Neither is
an error, but an option silently ignored changes what the pipeline does, so
``sluice validate`` lists them and the worker logs them when the connector
starts.

A key is read when it is one of the common connector keys (name, converters,
transforms, errors, topics, ...), one of the connector's own model, or under
a prefix the runtime or the connector reads as a namespace (converter and
transform settings, client overrides, topic creation, and the connector's
``config_prefixes``).
"""

from __future__ import annotations

from collections.abc import Mapping

from connect_worker.connector_config import CommonConnectorConfig, SinkConnectorConfig
from connectors.api import Connector, PluginConfig

#: Namespaces the runtime reads: converter and transform/predicate settings, client
#: overrides, topic creation for source topics.
RUNTIME_PREFIXES = (
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "transforms.",
    "predicates.",
    "producer.override.",
    "consumer.override.",
    "admin.override.",
    "topic.creation.",
)


def _aliases(model: type[PluginConfig]) -> set[str]:
    return {info.alias or name for name, info in model.model_fields.items()}


def unused_keys(connector: type[Connector], props: Mapping[str, str]) -> list[str]:
    """The keys of ``props`` that neither the runtime nor ``connector`` reads, sorted."""
    known = (
        _aliases(CommonConnectorConfig)
        | _aliases(SinkConnectorConfig)
        | _aliases(connector.config_model)
    )
    prefixes = RUNTIME_PREFIXES + tuple(connector.config_prefixes)
    return sorted(k for k in props if k not in known and not k.startswith(prefixes))
