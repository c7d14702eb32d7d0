"""The plugin's hook implementations: what it adds to a Sluice worker.

The entry point ``counter = "sluice_example_plugin.plugin"`` makes the worker
register this module; it calls each ``sluice_*`` hook once at start-up.
"""

from __future__ import annotations

from connectors.api import hookimpl
from sluice_example_plugin.counter import CounterSourceConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """Connector classes this plugin provides."""
    return [CounterSourceConnector]
