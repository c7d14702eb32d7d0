"""The predicates: TopicNameMatches, HasHeaderKey, RecordIsTombstone.

A transform runs only on records its predicate holds for (or, with
``negate=true``, does not hold for); the transform chain evaluates them.
Configured as ``predicates=p``, ``predicates.p.type=...``, ``predicates.p.<option>``.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, field_validator

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from transforms._config import KAFKA_PREDICATES, compile_regex, kafka_names
from transforms.api import Predicate


class TopicNameMatchesConfig(PluginConfig):
    """Options of TopicNameMatches."""

    pattern: str = Field(
        alias="pattern", min_length=1, description="Regular expression the whole topic must match."
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        compile_regex(pattern)
        return pattern


class TopicNameMatches(Predicate):
    """True for records whose topic matches ``pattern`` in full."""

    config_model = TopicNameMatchesConfig
    aliases = kafka_names("TopicNameMatches", KAFKA_PREDICATES)

    def configure(self, props: Mapping[str, str]) -> None:
        self._regex = compile_regex(TopicNameMatchesConfig.from_props(props).pattern)
        self._answers: dict[str, bool] = {}

    def test(self, record: ConnectRecord) -> bool:
        topic = record.topic
        answer = self._answers.get(topic)
        if answer is None:
            if len(self._answers) >= 4096:
                self._answers.clear()
            answer = self._answers[topic] = self._regex.fullmatch(topic) is not None
        return answer


class HasHeaderKeyConfig(PluginConfig):
    """Options of HasHeaderKey."""

    name: str = Field(alias="name", min_length=1, description="The header name to look for.")


class HasHeaderKey(Predicate):
    """True for records with at least one header called ``name``."""

    config_model = HasHeaderKeyConfig
    aliases = kafka_names("HasHeaderKey", KAFKA_PREDICATES)

    def configure(self, props: Mapping[str, str]) -> None:
        self._name = HasHeaderKeyConfig.from_props(props).name

    def test(self, record: ConnectRecord) -> bool:
        name = self._name
        return any(header[0] == name for header in record.headers)


class RecordIsTombstone(Predicate):
    """True for tombstones: records whose value is null (deletes, for compaction)."""

    config_model = PluginConfig
    aliases = kafka_names("RecordIsTombstone", KAFKA_PREDICATES)

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None
