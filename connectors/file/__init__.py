"""The file connectors: FileStreamSource (``source``) and FileStreamSink (``sink``),
their keys (``config``) and their plugin (``plugin``)."""
