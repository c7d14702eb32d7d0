"""The Spark sink connector (entry point ``spark`` in group ``sluice``).

pyspark is imported only when a task starts, never by this module.
"""

from __future__ import annotations

from connectors.api import hookimpl
from spark_sinks.sink_connector import SparkSinkConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """SparkSink: a Structured Streaming query from the log to files or a database."""
    return [SparkSinkConnector]
