"""AlterPartition (API 56): a leader's ISR changes, checked in Kafka's order
(ReplicationControlManager).

A sender whose broker epoch is not its current one gets STALE_BROKER_EPOCH for the
whole request. For one partition of the request, the first rule that fails gives
the error:

1. unknown topic id: UNKNOWN_TOPIC_ID (v2+; UNKNOWN_TOPIC_OR_PARTITION before),
   unknown partition: UNKNOWN_TOPIC_OR_PARTITION;
2. a leader or partition epoch *newer* than the controller's: NOT_CONTROLLER
   (this controller is behind; the leader retries elsewhere);
3. an older leader epoch: FENCED_LEADER_EPOCH;
4. the sender is not the leader: INVALID_REQUEST;
5. an older partition epoch: INVALID_UPDATE_VERSION (the leader's state is stale);
6. a new ISR that is empty, repeats a broker, has a non-replica or lacks the
   leader: INVALID_REQUEST;
7. a new ISR member that is unregistered, fenced, in controlled shutdown, or
   (v3) of another broker epoch than the leader saw: INELIGIBLE_REPLICA (v2+;
   OPERATION_NOT_ATTEMPTED before).

A valid change to another ISR becomes a ``PartitionChangeRecord``, and the next
partition of the request is checked on the image it left. An ISR smaller than
``min.insync.replicas`` is allowed (reported in the outcome).
"""

from __future__ import annotations

from collections.abc import Iterable

from log_engine.controller.brokers import current_registration
from log_engine.controller.config import ControllerConfig
from log_engine.controller.results import (
    AlterPartitionReply,
    ControllerResult,
    IsrChange,
    PartitionOutcome,
)
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import MetadataRecord, PartitionChangeRecord

NONE = int(ErrorCode.NONE)


def alter_partition_result(
    image: MetadataImage,
    config: ControllerConfig,
    broker_id: int,
    broker_epoch: int,
    changes: Iterable[IsrChange],
    api_version: int,
) -> ControllerResult[AlterPartitionReply]:
    """The records and reply for ``broker_id``'s AlterPartition request on ``image``."""
    if current_registration(image, broker_id, broker_epoch) is None:
        return ControllerResult((), AlterPartitionReply(int(ErrorCode.STALE_BROKER_EPOCH)))
    records: list[MetadataRecord] = []
    outcomes: list[PartitionOutcome] = []
    for change in changes:
        error = validate_isr_change(image, broker_id, change, api_version)
        if error != NONE:
            outcomes.append(PartitionOutcome(change.topic_id, change.partition, error))
            continue
        topic = image.topic_by_id(change.topic_id)
        assert topic is not None  # validated
        state = topic.partitions[change.partition]
        if change.new_isr != state.isr:
            record = PartitionChangeRecord(change.topic_id, change.partition, isr=change.new_isr)
            image = image.apply(record)
            records.append(record)
            state = image.topics[topic.name].partitions[change.partition]
        under = len(state.isr) < config.topic_min_insync_replicas(image, topic.name)
        outcomes.append(PartitionOutcome(change.topic_id, change.partition, NONE, state, under))
    return ControllerResult(tuple(records), AlterPartitionReply(NONE, tuple(outcomes)))


def validate_isr_change(
    image: MetadataImage, broker_id: int, change: IsrChange, api_version: int
) -> int:
    """The error code for ``change`` (NONE if it may be applied)."""
    topic = image.topic_by_id(change.topic_id)
    if topic is None:
        return int(
            ErrorCode.UNKNOWN_TOPIC_ID if api_version >= 2 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
    state = topic.partitions.get(change.partition)
    if state is None:
        return int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if change.leader_epoch > state.leader_epoch or change.partition_epoch > state.partition_epoch:
        return int(ErrorCode.NOT_CONTROLLER)
    if change.leader_epoch < state.leader_epoch:
        return int(ErrorCode.FENCED_LEADER_EPOCH)
    if broker_id != state.leader:
        return int(ErrorCode.INVALID_REQUEST)
    if change.partition_epoch < state.partition_epoch:
        return int(ErrorCode.INVALID_UPDATE_VERSION)
    new_isr = change.new_isr
    if (
        not new_isr
        or len(set(new_isr)) != len(new_isr)
        or any(r not in state.replicas for r in new_isr)
        or state.leader not in new_isr
    ):
        return int(ErrorCode.INVALID_REQUEST)
    for replica in new_isr:
        registration = image.registrations.get(replica)
        seen_epoch = change.broker_epochs.get(replica, -1)
        if (
            registration is None
            or registration.fenced
            or registration.in_controlled_shutdown
            or (seen_epoch != -1 and seen_epoch != registration.broker_epoch)
        ):
            if api_version >= 2:
                return int(ErrorCode.INELIGIBLE_REPLICA)
            return int(ErrorCode.OPERATION_NOT_ATTEMPTED)
    return int(ErrorCode.NONE)
