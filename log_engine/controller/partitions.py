"""CreatePartitions as records: a topic grows, never shrinks (Kafka's rules).

The count must exceed the topic's partitions (INVALID_PARTITIONS, with Kafka's
messages); a manual assignment, if given, names one replica list per new
partition, each of the topic's replication factor, of registered brokers, no
broker twice (INVALID_REPLICA_ASSIGNMENT). Without one, the new partitions are
placed over the unfenced brokers as a new topic's are (``placement.py``) with
the replication factor of the topic's partition 0. Each new partition gets a
PartitionRecord: ISR = the acceptable replicas, leader = the first of them.
"""

from __future__ import annotations

import random

from log_engine.controller.elections import acceptable_in
from log_engine.controller.placement import PlacementError, place_replicas
from log_engine.controller.results import NewPartitions, TopicOutcome
from log_engine.controller.topics import TopicRefused
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import MetadataRecord, PartitionRecord


def create_partition_records(
    image: MetadataImage, request: NewPartitions, rng: random.Random
) -> tuple[TopicOutcome, list[MetadataRecord]]:
    """The records growing ``request.name`` to ``request.count`` partitions; raises
    :class:`TopicRefused`."""
    topic = image.topics.get(request.name)
    if topic is None:
        raise TopicRefused(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {request.name!r} does not exist"
        )
    current = len(topic.partitions)
    if request.count < current:
        raise TopicRefused(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {request.name} currently has {current} partition(s); "
            f"{request.count} would not be an increase.",
        )
    if request.count == current:
        raise TopicRefused(
            ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s)."
        )
    factor = len(topic.partitions[0].replicas) if 0 in topic.partitions else 1
    added = request.count - current
    if request.assignments is not None:
        assignment = _checked_assignment(image, request.assignments, added, factor)
    else:
        try:
            assignment = place_replicas(image.unfenced_broker_ids(), added, factor, rng)
        except PlacementError as exc:
            raise TopicRefused(ErrorCode.INVALID_REPLICATION_FACTOR, str(exc)) from None
    acceptable = acceptable_in(image)
    records: list[MetadataRecord] = []
    for offset, replicas in enumerate(assignment):
        index = current + offset
        isr = tuple(r for r in replicas if acceptable(r))
        if not isr:
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"every replica of partition {index} ({list(replicas)}) is fenced or shutting down",
            )
        records.append(PartitionRecord(topic.topic_id, index, replicas, isr, isr[0], 0, 0))
    outcome = TopicOutcome(
        request.name, int(ErrorCode.NONE), None, topic.topic_id, request.count, factor
    )
    return outcome, records


def _checked_assignment(
    image: MetadataImage, assignments: tuple[tuple[int, ...], ...], added: int, factor: int
) -> list[tuple[int, ...]]:
    if len(assignments) != added:
        raise TopicRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Attempted to add {added} additional partition(s), but only "
            f"{len(assignments)} assignment(s) were specified.",
        )
    for replicas in assignments:
        if not replicas:
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.",
            )
        if len(set(replicas)) != len(replicas):
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment repeats a broker: {list(replicas)}.",
            )
        unknown = [r for r in replicas if r not in image.registrations]
        if unknown:
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker(s) {unknown}, but no such "
                "broker is registered.",
            )
        if len(replicas) != factor:
            raise TopicRefused(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes a partition with {len(replicas)} "
                f"replica(s), but the topic's partitions have {factor} replica(s).",
            )
    return [tuple(r) for r in assignments]
