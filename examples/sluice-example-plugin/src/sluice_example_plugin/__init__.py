"""An example third-party Sluice plugin: the CounterSource connector."""

from sluice_example_plugin.counter import CounterSourceConnector, CounterSourceTask

__all__ = ["CounterSourceConnector", "CounterSourceTask"]
