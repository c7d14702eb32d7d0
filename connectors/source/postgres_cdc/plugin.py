"""The PostgreSQL CDC source connector (entry point ``postgres_cdc`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl


@hookimpl
def sluice_connectors() -> list[type]:
    """PostgresCdcSource (filled in by the CDC work)."""
    return []
