"""The bundled connectors, registered through the same hook as third-party ones
(entry point ``file = "connectors.plugin"`` in group ``sluice``)."""

from __future__ import annotations

from connectors.api import hookimpl
from connectors.sink.file import FileStreamSinkConnector
from connectors.source.file import FileStreamSourceConnector


@hookimpl
def sluice_connectors() -> list[type]:
    """FileStreamSource and FileStreamSink."""
    return [FileStreamSourceConnector, FileStreamSinkConnector]
