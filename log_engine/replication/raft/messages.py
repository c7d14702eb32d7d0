"""The messages Raft nodes exchange (KIP-595's RPCs, KIP-630's FetchSnapshot).

Each message names its ``sender`` and ``receiver`` node ids. Responses repeat the
responder's current ``epoch`` and known ``leader_id`` so any exchange lets a stale
node catch up on who leads (as Kafka's responses do). The broker adapter maps these
one to one onto Kafka's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and
FetchSnapshot APIs; the core never sees bytes on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from log_engine.errors import ErrorCode
from log_engine.replication.raft.types import Entry, NodeId, OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class VoteRequest:
    """A candidate asks for a vote in ``epoch``; its log ends at ``last_offset_and_epoch``.

    With ``pre_vote`` it is a prospective asking whether it could win ``epoch``: the
    receiver answers but neither moves to ``epoch`` nor records a vote.
    """

    sender: NodeId
    receiver: NodeId
    epoch: int
    last_offset_and_epoch: OffsetAndEpoch
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class VoteResponse:
    """Granted only if the voter's vote is durable and the candidate's log is up to date."""

    sender: NodeId
    receiver: NodeId
    error: ErrorCode
    epoch: int
    leader_id: NodeId | None
    vote_granted: bool
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest:
    """A new leader announces itself to the voters of ``epoch``."""

    sender: NodeId
    receiver: NodeId
    epoch: int


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse:
    """Acknowledges a BeginQuorumEpoch (or tells a stale leader the newer epoch)."""

    sender: NodeId
    receiver: NodeId
    error: ErrorCode
    epoch: int
    leader_id: NodeId | None


@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest:
    """A leader resigns ``epoch``; ``preferred_successors`` lists voters, most caught up first."""

    sender: NodeId
    receiver: NodeId
    epoch: int
    preferred_successors: tuple[NodeId, ...]


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse:
    """Acknowledges an EndQuorumEpoch."""

    sender: NodeId
    receiver: NodeId
    error: ErrorCode
    epoch: int
    leader_id: NodeId | None


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """A follower (or observer) asks the leader of ``epoch`` for entries from ``fetch_offset``.

    ``last_fetched_epoch`` is the epoch of the follower's entry at ``fetch_offset - 1``
    (or its snapshot's epoch); the leader uses it to detect divergence. The offset is
    only sent once the entries below it are durable, so it doubles as the follower's
    acknowledgement.
    """

    sender: NodeId
    receiver: NodeId
    epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int = 0


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """Entries from ``fetch_offset``, or where the follower's log diverges, or a snapshot id.

    At most one of ``entries`` (non-empty), ``diverging_epoch`` and ``snapshot_id``
    is set. ``diverging_epoch`` is the leader's end offset for the largest epoch not
    above the follower's ``last_fetched_epoch``: the follower truncates to it.
    """

    sender: NodeId
    receiver: NodeId
    error: ErrorCode
    epoch: int
    leader_id: NodeId | None
    fetch_offset: int
    high_watermark: int | None = None
    log_start_offset: int = 0
    entries: tuple[Entry, ...] = ()
    diverging_epoch: OffsetAndEpoch | None = None
    snapshot_id: OffsetAndEpoch | None = None


@dataclass(frozen=True, slots=True)
class FetchSnapshotRequest:
    """Asks the leader for ``max_bytes`` of snapshot ``snapshot_id`` from ``position``."""

    sender: NodeId
    receiver: NodeId
    epoch: int
    snapshot_id: OffsetAndEpoch
    position: int
    max_bytes: int


@dataclass(frozen=True, slots=True)
class FetchSnapshotResponse:
    """One chunk of a snapshot; ``size`` is the snapshot's total length in bytes."""

    sender: NodeId
    receiver: NodeId
    error: ErrorCode
    epoch: int
    leader_id: NodeId | None
    snapshot_id: OffsetAndEpoch
    position: int = 0
    size: int = 0
    chunk: bytes = b""


RaftRequest = VoteRequest | BeginQuorumEpochRequest | EndQuorumEpochRequest | FetchRequest | (
    FetchSnapshotRequest
)
RaftResponse = (
    VoteResponse
    | BeginQuorumEpochResponse
    | EndQuorumEpochResponse
    | FetchResponse
    | FetchSnapshotResponse
)
RaftMessage = RaftRequest | RaftResponse
"""Anything one node sends another."""
