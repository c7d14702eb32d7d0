"""RegexRouter: rename a record's topic with a regular expression.

A topic that matches ``regex`` in full becomes ``replacement``, in which
``$1`` and ``${name}`` refer to the regex's groups (Java's syntax, as in
Kafka; ``\\$`` is a literal dollar). Other topics pass unchanged. A pipeline
sees few topics, so each topic's answer is computed once and remembered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator, model_validator

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from transforms._config import compile_regex, invalid, kafka_names
from transforms._records import with_topic
from transforms.api import Transformation

_TOPIC_CACHE_MAX = 4096
_Template = tuple[str | int, ...]  # literal text, or a group number/name


def parse_replacement(replacement: str, regex: re.Pattern[str]) -> _Template:
    """Java's replacement syntax, checked against ``regex``'s groups; raises ``invalid``."""
    parts: list[str | int] = []
    text: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\" and i + 1 < len(replacement):
            text.append(replacement[i + 1])
            i += 2
            continue
        if char != "$":
            text.append(char)
            i += 1
            continue
        ref, i = _group_ref(replacement, i + 1, regex)
        if text:
            parts.append("".join(text))
            text = []
        parts.append(ref)
    if text:
        parts.append("".join(text))
    return tuple(parts)


def _group_ref(replacement: str, i: int, regex: re.Pattern[str]) -> tuple[Any, int]:
    """The group referred to after a ``$`` at ``i - 1``, and where the reference ends."""
    if replacement.startswith("{", i):
        end = replacement.find("}", i)
        name = replacement[i + 1 : end] if end > 0 else ""
        if name not in regex.groupindex:
            raise invalid(f"replacement refers to an unknown group ${{{name}}}")
        return regex.groupindex[name], end + 1
    if i >= len(replacement) or not replacement[i].isdigit():
        raise invalid("replacement has a '$' not followed by a group number or {name}")
    number = int(replacement[i])
    if number > regex.groups:
        raise invalid(f"replacement refers to group ${number}; the regex has {regex.groups}")
    i += 1
    while i < len(replacement) and replacement[i].isdigit():  # Java: the longest valid number
        longer = number * 10 + int(replacement[i])
        if longer > regex.groups:
            break
        number, i = longer, i + 1
    return number, i


class RegexRouterConfig(PluginConfig):
    """Options of RegexRouter."""

    regex: str = Field(alias="regex", description="Regular expression the whole topic must match.")
    replacement: str = Field(
        alias="replacement",
        description="The new topic; `$1` or `${name}` insert the regex's groups.",
    )

    @field_validator("regex")
    @classmethod
    def _compiles(cls, regex: str) -> str:
        compile_regex(regex)
        return regex

    @model_validator(mode="after")
    def _groups_exist(self) -> RegexRouterConfig:
        parse_replacement(self.replacement, compile_regex(self.regex))
        return self


class RegexRouter(Transformation):
    """Route records to topics derived from their topic's name.

    Typical use: strip a CDC prefix (``dbserver1.inventory.(.*)`` -> ``$1``)
    or merge sharded topics into one.
    """

    config_model = RegexRouterConfig
    aliases = kafka_names("RegexRouter")

    def configure(self, props: Mapping[str, str]) -> None:
        config = RegexRouterConfig.from_props(props)
        self._regex = compile_regex(config.regex)
        self._template = parse_replacement(config.replacement, self._regex)
        self._topics: dict[str, str] = {}

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        topic = record.topic
        routed = self._topics.get(topic)
        if routed is None:
            routed = self.route(topic)
        return record if routed == topic else with_topic(record, routed)

    def route(self, topic: str) -> str:
        """The topic's new name (itself if it does not match)."""
        match = self._regex.fullmatch(topic)
        routed = topic
        if match is not None:
            routed = "".join(
                part if type(part) is str else (match.group(part) or "") for part in self._template
            )
        if len(self._topics) >= _TOPIC_CACHE_MAX:
            self._topics.clear()
        self._topics[topic] = routed
        return routed
