"""The MQTT source and sink connectors (entry point ``mqtt`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl


@hookimpl
def sluice_connectors() -> list[type]:
    """MqttSource and MqttSink (filled in by the MQTT work)."""
    return []
