"""What the controller's calls take and return: requests, replies, and ``ControllerResult``.

Every decision is a :class:`ControllerResult`: the metadata records to append
(possibly none) and the reply to send once they are committed. The caller
appends ``records`` to the quorum and answers with ``response`` only after the
append committed; if it failed (``NotLeaderError``), the reply is
NOT_CONTROLLER and the records are lost with the leadership, as in Kafka.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from log_engine.metadata.records import Endpoint, MetadataRecord
from log_engine.metadata.types import PartitionState

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ControllerResult(Generic[T]):
    """Records to append, then the reply to send after they committed."""

    records: tuple[MetadataRecord, ...]
    response: T


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """A BrokerRegistration (API 62) request."""

    broker_id: int
    incarnation_id: uuid.UUID
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    cluster_id: str | None = None


@dataclass(frozen=True, slots=True)
class RegistrationReply:
    error_code: int
    broker_epoch: int = -1
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerHeartbeat:
    """A BrokerHeartbeat (API 63) request.

    ``current_metadata_offset`` is the offset of the last metadata record the
    broker applied (its image's ``end_offset - 1``), as in Kafka.
    """

    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool = False
    want_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class HeartbeatReply:
    error_code: int
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class NewTopic:
    """One topic of a CreateTopics request; -1 takes the cluster default."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NewPartitions:
    """One topic of a CreatePartitions request: grow ``name`` to ``count`` partitions,
    placed by the controller or (``assignments``) one replica list per new partition."""

    name: str
    count: int
    assignments: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class TopicConfigChange:
    """One topic of an IncrementalAlterConfigs request: keys to set, keys to delete."""

    name: str
    set: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicOutcome:
    """One topic's answer to CreateTopics, DeleteTopics, CreatePartitions or
    IncrementalAlterConfigs."""

    name: str
    error_code: int
    error_message: str | None = None
    topic_id: uuid.UUID | None = None
    num_partitions: int = -1
    replication_factor: int = -1


@dataclass(frozen=True, slots=True)
class IsrChange:
    """One partition of an AlterPartition (API 56) request.

    ``broker_epochs`` (v3's NewIsrWithEpochs) gives the epoch the leader saw for
    each new ISR member (-1 or absent: not checked).
    """

    topic_id: uuid.UUID
    partition: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]
    broker_epochs: Mapping[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, state: PartitionState, new_isr: tuple[int, ...]) -> IsrChange:
        """The change a leader asks for, from the state it holds."""
        return cls(
            uuid.UUID(bytes=state.topic_id),
            state.partition,
            state.leader_epoch,
            state.partition_epoch,
            tuple(new_isr),
        )


@dataclass(frozen=True, slots=True)
class PartitionOutcome:
    """One partition's answer to AlterPartition: the new state, or an error.

    ``under_min_isr``: the ISR is now smaller than ``min.insync.replicas``
    (allowed, as in Kafka: acks=all producers get NOT_ENOUGH_REPLICAS).
    """

    topic_id: uuid.UUID
    partition: int
    error_code: int
    state: PartitionState | None = None
    under_min_isr: bool = False


@dataclass(frozen=True, slots=True)
class AlterPartitionReply:
    error_code: int
    partitions: tuple[PartitionOutcome, ...] = ()


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    """An AllocateProducerIds (API 67) answer: ids ``[start, start + length)``."""

    error_code: int
    start: int = -1
    length: int = 0
