"""The Spark sink connector (entry point ``spark`` in group ``sluice``).

pyspark is imported only when a task starts, never by this module.
"""

from __future__ import annotations

from connectors.api import hookimpl


@hookimpl
def sluice_connectors() -> list[type]:
    """SparkSink (filled in by the Spark work)."""
    return []
