"""The S3 source and sink connectors (entry point ``s3`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl
from connectors.s3.sink import S3SinkConnector
from connectors.s3.source import S3SourceConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """S3Source and S3Sink."""
    return [S3SourceConnector, S3SinkConnector]
