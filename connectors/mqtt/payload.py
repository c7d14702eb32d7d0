"""What the MQTT sink publishes: the topic a template names and the payload bytes.

Topic templates substitute ``${topic}`` (the record's topic in the log),
``${key}`` (the record key as text) and ``${partition}``; everything else is
literal. Payloads: ``bytes`` as they are, ``str`` as UTF-8, None as an empty
payload (with ``mqtt.retain=true`` that clears the retained message), and
anything else (dicts, lists, numbers, booleans) as compact JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

from connectors.api import ConfigError, DataError, SinkRecord
from connectors.mqtt.topics import topic_name_problem

PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
FIELDS = ("topic", "key", "partition")


class TopicTemplate:
    """A ``mqtt.topic`` value such as ``devices/${key}/cmd``, checked once, applied per record."""

    def __init__(self, template: str) -> None:
        unknown = [name for name in PLACEHOLDER.findall(template) if name not in FIELDS]
        if unknown:
            raise ConfigError(
                f"mqtt.topic: unknown placeholder(s) {', '.join('${' + n + '}' for n in unknown)}"
                f" (known: {', '.join('${' + n + '}' for n in FIELDS)})"
            )
        self.template = template
        self._static = None if PLACEHOLDER.search(template) else template
        if self._static is not None:
            problem = topic_name_problem(template)
            if problem:
                raise ConfigError(f"mqtt.topic: {template!r} {problem}")

    def render(self, record: SinkRecord) -> str:
        """The MQTT topic for ``record``; DataError when it is not a valid topic name."""
        if self._static is not None:
            return self._static

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name == "topic":
                return record.topic
            if name == "partition":
                return str(record.partition)
            if record.key is None:
                raise DataError(f"mqtt.topic {self.template!r} needs ${{key}} but the key is null")
            return as_text(record.key)

        topic = PLACEHOLDER.sub(substitute, self.template)
        problem = topic_name_problem(topic)
        if problem:
            raise DataError(f"MQTT topic {topic!r} (from mqtt.topic {self.template!r}) {problem}")
        return topic


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    return json.dumps(value, separators=(",", ":"), default=str)


def encode_payload(value: Any) -> bytes:
    """The payload bytes for a record value; DataError for values JSON cannot hold."""
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", errors="surrogatepass")
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise DataError(f"cannot publish a {type(value).__name__} value as JSON: {exc}") from exc
