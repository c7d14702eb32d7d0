"""One consumer group's membership state machine (Kafka's generic group protocol).

States, as Kafka names them::

    Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
      ^                   ^        |                                   | leader syncs
      |                   |        +--no members left--> Empty         v
      +--last member leaves / expires---------------------------- Stable

Any protocol type works (``consumer``, ``connect``, ...): the coordinator only
picks a protocol every member supports and relays the leader's assignment bytes.
This module holds state and rules; :mod:`group_coordinator` drives the timers.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum


class GroupState(Enum):
    """Kafka's group states, with the names DescribeGroups reports."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True, slots=True)
class JoinResult:
    """The body of one member's JoinGroup response."""

    error_code: int
    generation_id: int = -1
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()  # (id, instance id, metadata)


@dataclass(slots=True)
class Member:
    """A group member as the coordinator sees it."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    last_seen: float = field(default_factory=time.monotonic)
    join_waiter: asyncio.Future[JoinResult] | None = None
    sync_waiter: asyncio.Future[tuple[int, bytes]] | None = None

    def metadata_for(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        return b""

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    def is_expired(self, now: float) -> bool:
        waiting = self.join_waiter is not None or self.sync_waiter is not None
        return not waiting and now - self.last_seen > self.session_timeout_ms / 1000


@dataclass(slots=True)
class Group:
    """A group's members, generation and chosen protocol."""

    group_id: str
    state: GroupState = GroupState.EMPTY
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation_id: int = 0
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_member_ids: set[str] = field(default_factory=set)
    rebalance_deadline: float = 0.0

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Can a member with these protocols join (Kafka's INCONSISTENT_GROUP_PROTOCOL rule)?"""
        if not protocols:
            return False
        if not self.members:
            return True
        if protocol_type != self.protocol_type:
            return False
        names = {name for name, _ in protocols}
        return bool(names & self.candidate_protocols())

    def candidate_protocols(self) -> set[str]:
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        """The common protocol with the most first-preference votes (ties: member order)."""
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter()
        for member in self.members.values():
            votes[next(name for name, _ in member.protocols if name in candidates)] += 1
        return votes.most_common(1)[0][0]

    def all_joined(self) -> bool:
        return all(m.join_waiter is not None for m in self.members.values())

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def join_result_for(self, member: Member) -> JoinResult:
        """The JoinGroup response body a member gets for the current generation."""
        members: tuple[tuple[str, str | None, bytes], ...] = ()
        if member.member_id == self.leader_id and self.protocol_name is not None:
            members = tuple(
                (m.member_id, m.group_instance_id, m.metadata_for(self.protocol_name))
                for m in self.members.values()
            )
        return JoinResult(
            0,
            self.generation_id,
            self.protocol_name,
            self.leader_id or "",
            member.member_id,
            members,
        )
