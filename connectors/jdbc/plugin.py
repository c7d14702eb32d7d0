"""The JDBC source and sink connectors (entry point ``jdbc`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl


@hookimpl
def sluice_connectors() -> list[type]:
    """JdbcSource and JdbcSink."""
    from connectors.jdbc.sink import JdbcSinkConnector
    from connectors.jdbc.source import JdbcSourceConnector

    return [JdbcSourceConnector, JdbcSinkConnector]
