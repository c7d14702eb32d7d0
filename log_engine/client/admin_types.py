"""What the admin client takes and returns: plain, immutable descriptions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from log_engine.client.cluster import BrokerInfo, PartitionInfo
from log_engine.client.types import TopicPartition

OffsetSpec = Literal["earliest", "latest"] | int  # an int is a timestamp in ms


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create; ``replication_factor`` -1 takes the broker default."""

    name: str
    num_partitions: int = 1
    replication_factor: int = 1
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """A topic's partitions, leaders and replicas (Metadata)."""

    name: str
    is_internal: bool
    partitions: list[PartitionInfo]


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    """The cluster id, the controller and the live brokers."""

    cluster_id: str | None
    controller_id: int
    brokers: list[BrokerInfo]


@dataclass(frozen=True, slots=True)
class ConfigResource:
    """A config owner: ``("topic", name)`` or ``("broker", "<id>")``."""

    type: Literal["topic", "broker"]
    name: str


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One config of a topic or broker; ``value`` is None when sensitive."""

    name: str
    value: str | None
    read_only: bool
    is_default: bool
    is_sensitive: bool


@dataclass(frozen=True, slots=True)
class GroupListing:
    """A group as ListGroups names it."""

    group_id: str
    protocol_type: str


@dataclass(frozen=True, slots=True)
class MemberDescription:
    """A group member; ``assignment`` is decoded for consumer groups."""

    member_id: str
    client_id: str
    client_host: str
    assignment: list[TopicPartition]  # decoded for consumer groups, else empty
    raw_assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """A group's state (Empty, Stable, ...), protocol and members."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberDescription]
