"""The roles a node takes in an epoch, each with its own timers.

::

    Unattached --timeout--> Prospective --majority of pre-votes--> Candidate --majority--> Leader
        ^  |                    |                                        |                  |
        |  +--BeginQuorumEpoch / a response naming the leader--> Follower                    |
        |                                                                                   |
        +--- higher epoch seen (any role) <----------------- Resigned <--resign / lost quorum

Every role belongs to one epoch; epochs only grow. Observers (non-voters) are only
ever Unattached or Follower.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from log_engine.replication.raft.leader import LeaderState
from log_engine.replication.raft.types import NodeId, OffsetAndEpoch


class Role(Enum):
    """The role names (as ``describe()`` and the listener report them)."""

    UNATTACHED = "unattached"
    FOLLOWER = "follower"
    PROSPECTIVE = "prospective"
    CANDIDATE = "candidate"
    LEADER = "leader"
    RESIGNED = "resigned"


@dataclass(slots=True)
class Unattached:
    """No known leader in ``epoch``; may have voted. Stands for election at the deadline."""

    epoch: int
    voted_for: NodeId | None
    election_deadline_ms: int
    discovery_deadline_ms: int = 0  # observers: when to ask a voter who leads


@dataclass(slots=True)
class SnapshotDownload:
    """A snapshot a follower is fetching chunk by chunk."""

    snapshot_id: OffsetAndEpoch
    data: bytearray = field(default_factory=bytearray)


@dataclass(slots=True)
class Follower:
    """Follows ``leader_id`` in ``epoch`` by fetching from it."""

    epoch: int
    leader_id: NodeId
    voted_for: NodeId | None
    fetch_deadline_ms: int  # no successful fetch by then: the leader is presumed gone
    request_deadline_ms: int = 0  # resend the in-flight request after this
    in_flight: bool = False
    download: SnapshotDownload | None = None
    leader_refused: bool = False  # the leader's address refused a connection since the last fetch


@dataclass(slots=True)
class Prospective:
    """Asks for pre-votes for ``epoch + 1`` without leaving ``epoch`` (KIP-996).

    A pre-vote binds nobody and changes no epoch: a node cut off from the quorum
    keeps failing to gather them, so it never bumps the epoch and disrupts the
    leader when it comes back.
    """

    epoch: int
    voted_for: NodeId | None
    election_deadline_ms: int
    request_deadline_ms: int
    granted: set[NodeId] = field(default_factory=set)
    rejected: set[NodeId] = field(default_factory=set)
    abandoned_leader: NodeId | None = None  # the leader this node stopped hearing from


@dataclass(slots=True)
class Candidate:
    """Asks for votes in ``epoch``; has voted for itself."""

    epoch: int
    election_deadline_ms: int
    request_deadline_ms: int
    granted: set[NodeId] = field(default_factory=set)
    rejected: set[NodeId] = field(default_factory=set)


@dataclass(slots=True)
class Resigned:
    """A former leader of ``epoch`` that stopped taking writes and waits for a successor."""

    epoch: int
    election_deadline_ms: int
    request_deadline_ms: int
    preferred_successors: tuple[NodeId, ...]
    unacknowledged: set[NodeId] = field(default_factory=set)


@dataclass(slots=True)
class Leading:
    """Leads ``epoch``; the replication bookkeeping lives in :class:`LeaderState`."""

    leader: LeaderState

    @property
    def epoch(self) -> int:
        return self.leader.epoch


RoleState = Unattached | Follower | Prospective | Candidate | Leading | Resigned


def role_of(state: RoleState) -> Role:
    """The :class:`Role` name of a role state."""
    return _ROLES[type(state)]


_ROLES: dict[type, Role] = {
    Unattached: Role.UNATTACHED,
    Follower: Role.FOLLOWER,
    Prospective: Role.PROSPECTIVE,
    Candidate: Role.CANDIDATE,
    Leading: Role.LEADER,
    Resigned: Role.RESIGNED,
}
