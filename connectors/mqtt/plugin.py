"""The MQTT source and sink connectors (entry point ``mqtt`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl
from connectors.sink.mqtt import MqttSinkConnector
from connectors.source.mqtt import MqttSourceConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """MqttSource and MqttSink."""
    return [MqttSourceConnector, MqttSinkConnector]
