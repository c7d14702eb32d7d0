"""Values shared by the controller, the metadata image and the broker's replicas.

A leaf module: it imports nothing from the rest of the engine, so the
controller (which writes these), the metadata image (which holds them) and the
replica manager (which acts on them) can all depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NO_LEADER = -1
"""``PartitionState.leader`` when no replica may lead (Kafka's -1)."""


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """One advertised listener of a broker, as Metadata and follower fetchers use it."""

    listener: str
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A registered broker as the metadata image knows it."""

    broker_id: int
    epoch: int
    endpoints: tuple[BrokerEndpoint, ...]
    fenced: bool = True
    rack: str | None = None

    def endpoint(self, listener: str) -> BrokerEndpoint | None:
        """The endpoint on ``listener`` (a name such as ``PLAINTEXT``), if advertised."""
        return next((e for e in self.endpoints if e.listener == listener), None)


@dataclass(frozen=True, slots=True)
class PartitionState:
    """Who leads a partition and who is in sync, as the controller last decided it.

    ``leader_epoch`` grows on every leader change; ``partition_epoch`` on every
    change at all (leader or ISR), and AlterPartition requests must name the
    current one, as in Kafka.
    """

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    partition_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    topic_id: bytes = field(default=b"\x00" * 16)

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER
