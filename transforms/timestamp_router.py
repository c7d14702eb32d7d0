"""TimestampRouter: send each record to a topic named after its topic and timestamp.

``topic.format`` may use ``${topic}`` and ``${timestamp}``; the timestamp is
the record's, formatted in UTC with the SimpleDateFormat pattern
``timestamp.format``. Useful for time-partitioned sinks (an index per day).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import Field, field_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from transforms._config import invalid, kafka_names
from transforms._java_date_format import DateFormatError, JavaDateFormat
from transforms._records import with_topic
from transforms._schemas import datetime_from_ms
from transforms.api import Transformation

_PLACEHOLDER = re.compile(r"(\$\{topic\}|\$\{timestamp\})")


class TimestampRouterConfig(PluginConfig):
    """Options of TimestampRouter."""

    topic_format: str = Field(
        "${topic}-${timestamp}",
        alias="topic.format",
        min_length=1,
        description="The new topic; `${topic}` and `${timestamp}` are replaced.",
    )
    timestamp_format: str = Field(
        "yyyyMMdd",
        alias="timestamp.format",
        min_length=1,
        description="SimpleDateFormat pattern for `${timestamp}`, in UTC.",
    )

    @field_validator("timestamp_format")
    @classmethod
    def _pattern_compiles(cls, pattern: str) -> str:
        try:
            JavaDateFormat(pattern)
        except DateFormatError as exc:
            raise invalid(str(exc)) from None
        return pattern


class TimestampRouter(Transformation):
    """Route records to per-period topics (``orders-20240305``)."""

    config_model = TimestampRouterConfig
    aliases = kafka_names("TimestampRouter")

    def configure(self, props: Mapping[str, str]) -> None:
        config = TimestampRouterConfig.from_props(props)
        self._parts = tuple(_PLACEHOLDER.split(config.topic_format))  # odd items: placeholders
        self._timestamps = JavaDateFormat(config.timestamp_format)
        self._last: tuple[int, str] = (-1, "")  # records often share a timestamp

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataError("TimestampRouter: the record has no timestamp")
        last_timestamp, formatted = self._last
        if timestamp != last_timestamp:
            formatted = self._timestamps.format(datetime_from_ms(timestamp))
            self._last = (timestamp, formatted)
        values = {"${topic}": record.topic, "${timestamp}": formatted}
        topic = "".join(values[part] if i % 2 else part for i, part in enumerate(self._parts))
        return with_topic(record, topic)
