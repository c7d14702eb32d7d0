"""AlterPartition (API 56) validation, in Kafka's order (ReplicationControlManager).

For one partition of a leader's request, the first rule that fails gives the error:

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

An ISR smaller than ``min.insync.replicas`` is allowed (reported in the outcome).
"""

from __future__ import annotations

from log_engine.controller.results import IsrChange
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage


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
