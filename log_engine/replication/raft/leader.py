"""A leader's view of its followers: their acknowledged offsets and the high watermark.

The leader learns each replica's progress from the ``fetch_offset`` of its valid
Fetch requests (a follower only fetches from an offset once the entries below it
are durable). The high watermark is the largest offset that a majority of voters
(the leader counted with its own durable end offset) have reached, and it only
moves once that offset is above ``epoch_start_offset``: a new leader commits
nothing until the leader-change entry of its own epoch is replicated, which
commits everything below it as well (Raft's rule for entries of older terms).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from log_engine.replication.raft.messages import FetchRequest
from log_engine.replication.raft.types import NodeId, QuorumStatus, ReplicaStatus


@dataclass(slots=True)
class ReplicaProgress:
    """What the leader knows of one replica."""

    end_offset: int = 0
    last_fetch_ms: int | None = None


@dataclass(slots=True)
class ParkedFetch:
    """A Fetch that found nothing new, held until new entries, a new HW or its deadline."""

    request: FetchRequest
    deadline_ms: int


@dataclass(slots=True)
class LeaderState:
    """Replication bookkeeping of the leader of ``epoch``."""

    node_id: NodeId
    epoch: int
    epoch_start_offset: int
    voter_ids: frozenset[NodeId]
    started_ms: int
    begin_deadline_ms: int = 0  # when to resend BeginQuorumEpoch to silent voters
    voters: dict[NodeId, ReplicaProgress] = field(default_factory=dict)
    observers: dict[NodeId, ReplicaProgress] = field(default_factory=dict)
    acknowledged: set[NodeId] = field(default_factory=set)
    parked: dict[NodeId, ParkedFetch] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for voter in self.voter_ids:
            self.voters.setdefault(voter, ReplicaProgress())
        self.acknowledged.add(self.node_id)

    def update_local(self, end_offset: int, now_ms: int) -> None:
        """Record the leader's own durable end offset."""
        progress = self.voters[self.node_id]
        progress.end_offset = end_offset
        progress.last_fetch_ms = now_ms

    def update_replica(self, replica: NodeId, fetch_offset: int, now_ms: int) -> None:
        """Record a valid Fetch from ``replica`` at ``fetch_offset``."""
        book = self.voters if replica in self.voter_ids else self.observers
        progress = book.setdefault(replica, ReplicaProgress())
        progress.end_offset = fetch_offset
        progress.last_fetch_ms = now_ms
        self.acknowledged.add(replica)

    def touch(self, replica: NodeId, now_ms: int) -> None:
        """Record contact from ``replica`` without progress (a diverging or snapshot fetch)."""
        book = self.voters if replica in self.voter_ids else self.observers
        book.setdefault(replica, ReplicaProgress()).last_fetch_ms = now_ms
        self.acknowledged.add(replica)

    def majority_offset(self) -> int | None:
        """The high watermark the voters' progress supports, or None before the first commit."""
        ends = sorted((p.end_offset for p in self.voters.values()), reverse=True)
        candidate = ends[len(self.voter_ids) // 2]
        return candidate if candidate > self.epoch_start_offset else None

    def has_quorum_contact(self, now_ms: int, window_ms: int) -> bool:
        """Whether a majority of voters (self included) fetched within ``window_ms``."""
        recent = 0
        for voter, progress in self.voters.items():
            last = self.started_ms if progress.last_fetch_ms is None else progress.last_fetch_ms
            if voter == self.node_id or now_ms - last <= window_ms:
                recent += 1
        return recent >= len(self.voter_ids) // 2 + 1

    def unacknowledged(self) -> list[NodeId]:
        """Voters that have not yet answered BeginQuorumEpoch nor fetched in this epoch."""
        return sorted(v for v in self.voter_ids if v not in self.acknowledged)

    def successors_by_progress(self) -> tuple[NodeId, ...]:
        """Other voters, most caught up first (EndQuorumEpoch's preferred successors)."""
        others = [v for v in self.voter_ids if v != self.node_id]
        return tuple(sorted(others, key=lambda v: (-self.voters[v].end_offset, v)))

    def status(self, high_watermark: int) -> QuorumStatus:
        """Every replica's progress, voters then observers, by node id."""

        def rows(book: dict[NodeId, ReplicaProgress]) -> tuple[ReplicaStatus, ...]:
            ordered = sorted(book.items())
            return tuple(ReplicaStatus(n, p.end_offset, p.last_fetch_ms) for n, p in ordered)

        return QuorumStatus(
            self.node_id, self.epoch, high_watermark, rows(self.voters), rows(self.observers)
        )
