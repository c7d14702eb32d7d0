"""The MQTT source and sink connectors (entry point ``mqtt`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl
from connectors.mqtt.sink import MqttSinkConnector
from connectors.mqtt.source import MqttSourceConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """MqttSource and MqttSink."""
    return [MqttSourceConnector, MqttSinkConnector]
