"""The Raft core's vocabulary: offsets with epochs, log entries, snapshots, election state.

All values are immutable. Offsets are 0-based positions in the replicated log; an
"end offset" is exclusive (the offset the next entry will get), as Kafka's.
"""

from __future__ import annotations

from dataclasses import dataclass

NodeId = int
"""A voter's or observer's ``node.id``."""

NO_NODE: NodeId = -1
"""Kafka's marker for "no leader / no vote" on the wire; the core uses ``None``."""


@dataclass(frozen=True, slots=True)
class OffsetAndEpoch:
    """An exclusive end offset and the epoch of the entry just below it."""

    offset: int
    epoch: int

    def at_least_as_up_to_date_as(self, other: OffsetAndEpoch) -> bool:
        """Raft's log comparison: the later last epoch wins, then the longer log."""
        return (self.epoch, self.offset) >= (other.epoch, other.offset)


@dataclass(frozen=True, slots=True)
class Entry:
    """One replicated log entry.

    ``control`` entries are written by the core itself (the leader-change entry a new
    leader appends); they take an offset but are not handed to the state machine.
    """

    offset: int
    epoch: int
    payload: bytes
    control: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A state-machine image covering every entry below ``snapshot_id.offset``.

    ``snapshot_id.epoch`` is the epoch of the last entry the snapshot covers, so a
    follower whose log starts at the snapshot can still be checked for divergence.
    """

    snapshot_id: OffsetAndEpoch
    payload: bytes


@dataclass(frozen=True, slots=True)
class ElectionState:
    """The quorum state that must be durable before a node acts on it.

    ``voted_for`` is the candidate this node voted for in ``epoch`` (or ``None``);
    ``leader_id`` is the leader it knows for ``epoch`` (or ``None``).
    """

    epoch: int
    voted_for: NodeId | None = None
    leader_id: NodeId | None = None


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    """Who leads which epoch, as the state machine above is told."""

    leader_id: NodeId | None
    epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaStatus:
    """One replica as the leader sees it (Kafka's DescribeQuorum ReplicaState)."""

    node_id: NodeId
    end_offset: int
    last_fetch_ms: int | None


@dataclass(frozen=True, slots=True)
class QuorumStatus:
    """The quorum as the leader reports it (for ``sluice cluster status``)."""

    leader_id: NodeId
    epoch: int
    high_watermark: int
    voters: tuple[ReplicaStatus, ...]
    observers: tuple[ReplicaStatus, ...]
