"""The file connectors' keys (Kafka's names): FileStreamSource's and FileStreamSink's."""

from __future__ import annotations

from pydantic import Field

from connectors.api import PluginConfig, key_info


class FileSourceConfig(PluginConfig):
    """FileStreamSource's keys (Kafka's names)."""

    file: str = Field(
        alias="file",
        min_length=1,
        description="The file to read; lines appended later are read as they come.",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    topic: str = Field(
        alias="topic",
        min_length=1,
        description="The topic to write each line to.",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    batch_size: int = Field(
        2000,
        alias="batch.size",
        ge=1,
        le=1_000_000,
        description="Maximum number of lines returned by one poll.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )


class FileSinkConfig(PluginConfig):
    """FileStreamSink's own key (``topics``/``topics.regex`` are every sink's)."""

    file: str = Field(
        alias="file",
        min_length=1,
        description="The file to append lines to (created if missing).",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
