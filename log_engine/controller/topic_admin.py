"""Admin requests answered topic by topic: CreateTopics, CreatePartitions,
IncrementalAlterConfigs of topics and DeleteTopics.

Each is a :class:`PerTopicRequest`: the names of its topics and a rule giving
the records of the i-th one (``topics.py``, ``partitions.py``,
``topic_configs.py``), or refusing it (``TopicRefused``: that topic gets its
error and message, and writes nothing). Every topic is checked on the image the
earlier ones of the request left, so two topics of one request see each other;
with ``validate_only`` each is checked and answered but nothing is written, and
the image does not move. CreatePartitions refuses a topic named twice
(INVALID_REQUEST).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from log_engine.controller.config import ControllerConfig
from log_engine.controller.partitions import create_partition_records
from log_engine.controller.results import (
    ControllerResult,
    NewPartitions,
    NewTopic,
    TopicConfigChange,
    TopicOutcome,
)
from log_engine.controller.topic_configs import alter_config_records
from log_engine.controller.topics import (
    TopicRefused,
    create_topic_records,
    delete_topic_records,
    refusal,
)
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import MetadataRecord

TopicRule = Callable[[MetadataImage, int], tuple[TopicOutcome, list[MetadataRecord]]]


@dataclass(frozen=True, slots=True)
class PerTopicRequest:
    """The topics of one request, and ``rule(image, i)``: the i-th topic's outcome and
    records on ``image`` (or :class:`TopicRefused`)."""

    names: tuple[str, ...]
    rule: TopicRule

    def refused(self, error_code: int) -> tuple[TopicOutcome, ...]:
        """The same error for every topic (NOT_CONTROLLER)."""
        return tuple(TopicOutcome(n, error_code) for n in self.names)

    def decide(
        self, image: MetadataImage, validate_only: bool
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """One outcome per topic, and the records of those that pass."""
        records: list[MetadataRecord] = []
        outcomes: list[TopicOutcome] = []
        for i, name in enumerate(self.names):
            try:
                outcome, new = self.rule(image, i)
            except TopicRefused as error:
                outcomes.append(refusal(name, error))
                continue
            outcomes.append(outcome)
            if not validate_only:
                image = image.apply_all(new)
                records.extend(new)
        return ControllerResult(tuple(records), tuple(outcomes))


def create_topics_request(
    topics: Iterable[NewTopic], config: ControllerConfig, rng: random.Random
) -> PerTopicRequest:
    """CreateTopics (rules: ``topics.py``)."""
    topics = list(topics)
    return PerTopicRequest(
        tuple(t.name for t in topics),
        lambda image, i: create_topic_records(image, topics[i], config, rng),
    )


def create_partitions_request(
    requests: Iterable[NewPartitions], rng: random.Random
) -> PerTopicRequest:
    """CreatePartitions (rules: ``partitions.py``); a topic named twice is refused."""
    requests = list(requests)
    names = tuple(r.name for r in requests)

    def grow(image: MetadataImage, i: int) -> tuple[TopicOutcome, list[MetadataRecord]]:
        if names.count(names[i]) > 1:
            raise TopicRefused(
                ErrorCode.INVALID_REQUEST,
                f"topic {names[i]!r} appears more than once in the request",
            )
        return create_partition_records(image, requests[i], rng)

    return PerTopicRequest(names, grow)


def alter_topic_configs_request(changes: Iterable[TopicConfigChange]) -> PerTopicRequest:
    """IncrementalAlterConfigs of topics (rules: ``topic_configs.py``)."""
    changes = list(changes)
    return PerTopicRequest(
        tuple(c.name for c in changes), lambda image, i: alter_config_records(image, changes[i])
    )


def delete_topics_request(names: Iterable[str]) -> PerTopicRequest:
    """DeleteTopics by name (rule: ``topics.py``)."""
    names = tuple(names)
    return PerTopicRequest(names, lambda image, i: delete_topic_records(image, names[i]))
