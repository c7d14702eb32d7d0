"""Errors of the metadata layer.

::

    MetadataError                 (LogEngineError)
    ├── MetadataRecordError       bytes that are not a metadata record (frame, type, body)
    └── MetadataReplayError       a well-formed record the image cannot apply (e.g. a partition
                                  of a topic it does not know): the log and the image disagree

Both are fatal for the node that meets them in committed entries: every replica
holds the same entries, so retrying cannot help (Kafka's brokers fault too).
"""

from __future__ import annotations

from log_engine.errors import LogEngineError


class MetadataError(LogEngineError):
    """Base class of the metadata layer's errors."""


class MetadataRecordError(MetadataError):
    """The bytes do not decode to a known metadata record."""


class MetadataReplayError(MetadataError):
    """A record does not fit the image it is applied to."""
