"""The bundled connectors, registered through the same hook as third-party ones
(entry point ``file = "connectors.file.plugin"`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl
from connectors.file.sink import FileStreamSinkConnector
from connectors.file.source import FileStreamSourceConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """FileStreamSource and FileStreamSink."""
    return [FileStreamSourceConnector, FileStreamSinkConnector]
