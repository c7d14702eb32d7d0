"""Topic creation and deletion as records (Kafka's ReplicationControlManager rules).

Creation validates the name (1-249 characters of ``[a-zA-Z0-9._-]``, not ``.``
or ``..``), refuses an existing name (TOPIC_ALREADY_EXISTS), takes -1 as the
cluster default for partitions and replication factor, places replicas over
the unfenced brokers (``placement.py``) or checks a manual assignment, and
writes a TopicRecord, its ConfigRecords and one PartitionRecord per partition
(ISR = the acceptable replicas, leader = the first of them, epochs 0).
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Mapping

from log_engine.controller.config import ControllerConfig
from log_engine.controller.elections import acceptable_in
from log_engine.controller.placement import PlacementError, place_replicas
from log_engine.controller.results import NewTopic, TopicOutcome
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    TOPIC_RESOURCE,
    ConfigRecord,
    MetadataRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)

_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
_BOOLEAN_KEYS = ("unclean.leader.election.enable",)
_POSITIVE_INT_KEYS = ("min.insync.replicas",)


class TopicRefused(Exception):
    """A topic that cannot be created or deleted: its Kafka error code and why."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


def refusal(topic: NewTopic | str, error: TopicRefused) -> TopicOutcome:
    name = topic if isinstance(topic, str) else topic.name
    return TopicOutcome(name, int(error.error_code), error.message)


def create_topic_records(
    image: MetadataImage, topic: NewTopic, config: ControllerConfig, rng: random.Random
) -> tuple[TopicOutcome, list[MetadataRecord]]:
    """The records creating ``topic`` on ``image``; raises :class:`TopicRefused`."""
    name = topic.name
    if not _LEGAL_NAME.match(name) or name in (".", ".."):
        raise TopicRefused(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"invalid topic name {name!r}: 1-249 characters of [a-zA-Z0-9._-], not '.' or '..'",
        )
    if name in image.topics:
        raise TopicRefused(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
    check_topic_configs(topic.configs)
    assignment = _assignment(image, topic, config, rng)
    acceptable = acceptable_in(image)
    topic_id = _new_topic_id(image, rng)
    records: list[MetadataRecord] = [TopicRecord(name, topic_id)]
    records.extend(
        ConfigRecord(TOPIC_RESOURCE, name, key, topic.configs[key]) for key in sorted(topic.configs)
    )
    for index, replicas in enumerate(assignment):
        isr = tuple(r for r in replicas if acceptable(r))
        if not isr:
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"every replica of partition {index} ({list(replicas)}) is fenced or shutting down",
            )
        records.append(PartitionRecord(topic_id, index, replicas, isr, isr[0], 0, 0))
    outcome = TopicOutcome(
        name, int(ErrorCode.NONE), None, topic_id, len(assignment), len(assignment[0])
    )
    return outcome, records


def _assignment(
    image: MetadataImage, topic: NewTopic, config: ControllerConfig, rng: random.Random
) -> list[tuple[int, ...]]:
    if topic.assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise TopicRefused(
                ErrorCode.INVALID_REQUEST,
                "give either a replica assignment or partitions and a replication factor, "
                "not both",
            )
        return _manual_assignment(image, topic.assignments)
    partitions = config.num_partitions if topic.num_partitions == -1 else topic.num_partitions
    factor = (
        config.default_replication_factor
        if topic.replication_factor == -1
        else topic.replication_factor
    )
    if partitions <= 0:
        raise TopicRefused(
            ErrorCode.INVALID_PARTITIONS, f"number of partitions must be positive, not {partitions}"
        )
    if factor <= 0:
        raise TopicRefused(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"replication factor must be positive, not {factor}",
        )
    try:
        return place_replicas(image.unfenced_broker_ids(), partitions, factor, rng)
    except PlacementError as exc:
        raise TopicRefused(ErrorCode.INVALID_REPLICATION_FACTOR, str(exc)) from None


def _manual_assignment(
    image: MetadataImage, assignments: Mapping[int, tuple[int, ...]]
) -> list[tuple[int, ...]]:
    if sorted(assignments) != list(range(len(assignments))):
        raise TopicRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"partitions {sorted(assignments)} are not numbered 0 to {len(assignments) - 1}",
        )
    out = [tuple(assignments[p]) for p in range(len(assignments))]
    sizes = {len(replicas) for replicas in out}
    for index, replicas in enumerate(out):
        if not replicas or len(set(replicas)) != len(replicas):
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"partition {index}: replicas {list(replicas)} are empty or repeat a broker",
            )
        unknown = [r for r in replicas if r not in image.registrations]
        if unknown:
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"partition {index}: broker(s) {unknown} are not registered",
            )
    if len(sizes) != 1:
        raise TopicRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"partitions have different replication factors {sorted(sizes)}",
        )
    return out


def check_topic_configs(configs: Mapping[str, str]) -> None:
    """Refuse (INVALID_CONFIG) a bad value of a key the controller reads itself."""
    for key, value in configs.items():
        if key in _BOOLEAN_KEYS and value not in ("true", "false"):
            raise TopicRefused(
                ErrorCode.INVALID_CONFIG, f"{key} must be true or false, not {value!r}"
            )
        if key in _POSITIVE_INT_KEYS and not (value.isdigit() and int(value) >= 1):
            raise TopicRefused(
                ErrorCode.INVALID_CONFIG, f"{key} must be a positive integer, not {value!r}"
            )


def _new_topic_id(image: MetadataImage, rng: random.Random) -> uuid.UUID:
    while True:
        topic_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        if topic_id not in image.topic_names:
            return topic_id


def delete_topic_records(
    image: MetadataImage, name: str
) -> tuple[TopicOutcome, list[MetadataRecord]]:
    """The record deleting topic ``name``; raises :class:`TopicRefused` if there is none."""
    topic = image.topics.get(name)
    if topic is None:
        raise TopicRefused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
    outcome = TopicOutcome(name, int(ErrorCode.NONE), None, topic.topic_id, len(topic.partitions))
    return outcome, [RemoveTopicRecord(topic.topic_id)]
