"""The PostgreSQL CDC source connector (entry point ``postgres_cdc`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl
from connectors.postgres_cdc.source import PostgresCdcConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """PostgresCdcSource (Debezium's io.debezium.connector.postgresql.PostgresConnector)."""
    return [PostgresCdcConnector]
