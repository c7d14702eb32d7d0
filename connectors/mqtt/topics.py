"""MQTT topic names and filters: the rules of MQTT 3.1.1 section 4.7.

A topic *name* (what a message is published to) is 1 to 65535 UTF-8 bytes,
has no ``+``, ``#`` or NUL. A topic *filter* (what is subscribed to) may use
``+`` for exactly one whole level and ``#`` as the whole last level.
"""

from __future__ import annotations

from typing import Any

MAX_TOPIC_BYTES = 65535
MAX_CACHED_TOPICS = 10_000


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be published to, or None when it can."""
    if not name:
        return "is empty"
    if "+" in name or "#" in name:
        return "contains a wildcard (+ or #), which only subscriptions may use"
    if "\x00" in name:
        return "contains a NUL character"
    if len(name.encode("utf-8", errors="surrogatepass")) > MAX_TOPIC_BYTES:
        return f"is longer than {MAX_TOPIC_BYTES} bytes"
    return None


def topic_filter_problem(topic_filter: str) -> str | None:
    """Why ``topic_filter`` cannot be subscribed to, or None when it can."""
    if not topic_filter:
        return "is empty"
    if "\x00" in topic_filter:
        return "contains a NUL character"
    if len(topic_filter.encode("utf-8", errors="surrogatepass")) > MAX_TOPIC_BYTES:
        return f"is longer than {MAX_TOPIC_BYTES} bytes"
    levels = topic_filter.split("/")
    for index, level in enumerate(levels):
        if "#" in level and (level != "#" or index != len(levels) - 1):
            return "uses # other than as the whole last level"
        if "+" in level and level != "+":
            return "uses + other than as a whole level"
    return None


class TopicKeys:
    """A received topic (UTF-8 bytes) as a record key and source partition, decoded once.

    Most sources see few distinct topics; the cache is emptied when it holds
    :data:`MAX_CACHED_TOPICS`, so many topics cost memory only up to that.
    The partition dicts are shared by the records of one topic: read-only.
    """

    def __init__(self) -> None:
        self._known: dict[bytes, tuple[str, dict[str, Any]]] = {}

    def get(self, topic: bytes) -> tuple[str, dict[str, Any]]:
        found = self._known.get(topic)
        if found is None:
            if len(self._known) >= MAX_CACHED_TOPICS:
                self._known.clear()
            name = topic.decode()
            found = self._known[topic] = (name, {"mqtt.topic": name})
        return found
