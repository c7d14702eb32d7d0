"""The Raft core: one node of a KRaft-style quorum as a pure state machine.

Inputs are messages, clock readings and the state machine's requests (append,
snapshot, resign); each call returns an :class:`Output` of persist actions, messages
and events (see ``actions.py`` for the order the driver must keep). There is no I/O,
no wall clock and no randomness but the seeded ``random.Random`` handed in, so a
simulated network can replay any run from its seed.

Replication is pull-based as KIP-595: followers Fetch from the leader with their
fetch offset and last fetched epoch; the leader answers with entries, with the
epoch where their logs diverge, or with the id of a snapshot to fetch, and learns
each follower's progress from its fetch offsets. Election handling is in this
module and ``election.py`` (Vote, BeginQuorumEpoch, EndQuorumEpoch); the Fetch and
FetchSnapshot exchange is in ``replication.py``.
"""

from __future__ import annotations

import random

from log_engine.errors import InvalidSnapshotError, NotLeaderError
from log_engine.invariants import check
from log_engine.replication.raft.actions import (
    AppendEntries,
    CommitEvent,
    LeaderChangeEvent,
    LoadSnapshotEvent,
    Output,
    SaveElectionState,
    SaveSnapshot,
)
from log_engine.replication.raft.config import RaftConfig
from log_engine.replication.raft.election import Elections
from log_engine.replication.raft.leader import LeaderState
from log_engine.replication.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftMessage,
    VoteRequest,
    VoteResponse,
)
from log_engine.replication.raft.replication import Replication
from log_engine.replication.raft.states import (
    Candidate,
    Follower,
    Leading,
    Prospective,
    Resigned,
    Role,
    RoleState,
    Unattached,
    role_of,
)
from log_engine.replication.raft.storage import DurableState
from log_engine.replication.raft.types import (
    ElectionState,
    Entry,
    LeaderAndEpoch,
    NodeId,
    OffsetAndEpoch,
    QuorumStatus,
    Snapshot,
)

LEADER_CHANGE_PAYLOAD = b"leader-change"


class RaftNode(Elections, Replication):
    """One voter or observer of the quorum (start with :meth:`start`)."""

    def __init__(
        self, config: RaftConfig, durable: DurableState, now_ms: int, rng: random.Random
    ) -> None:
        self.config = config
        self.rng = rng
        self.now_ms = now_ms
        self.log = durable.build_log()
        self.snapshot: Snapshot | None = durable.snapshot
        start = self.log.start_offset
        self.high_watermark = start  # a snapshot only ever covers committed entries
        self.applied_end = 0  # end offset of what the state machine has been handed
        self._durable_election = durable.election
        self.state: RoleState = self._recover_state(durable.election)

    # ---- the public API -------------------------------------------------------

    @property
    def node_id(self) -> NodeId:
        return self.config.node_id

    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def role(self) -> Role:
        return role_of(self.state)

    @property
    def leader_id(self) -> NodeId | None:
        """The leader this node knows for its epoch."""
        if isinstance(self.state, Leading):
            return self.node_id
        if isinstance(self.state, Follower):
            return self.state.leader_id
        return None

    def start(self) -> Output:
        """Hand the state machine the recovered snapshot; a lone voter elects itself."""
        out = Output()
        if self.snapshot is not None:
            out.events.append(LoadSnapshotEvent(self.snapshot))
            self.applied_end = self.snapshot.snapshot_id.offset
        out.events.append(LeaderChangeEvent(LeaderAndEpoch(self.leader_id, self.epoch)))
        if self.config.voter_ids == {self.node_id} and not isinstance(self.state, Leading):
            self._become_candidate(out)
        elif isinstance(self.state, Follower):
            self._send_fetch(self.state, out)
        return out

    def tick(self, now_ms: int) -> Output:
        """Advance the clock to ``now_ms`` and fire whatever timers expired."""
        self._advance_clock(now_ms)
        out = Output()
        state = self.state
        if isinstance(state, Unattached):
            self._tick_unattached(state, out)
        elif isinstance(state, Candidate):
            self._tick_candidate(state, out)
        elif isinstance(state, Prospective):
            self._tick_prospective(state, out)
        elif isinstance(state, Follower):
            self._tick_follower(state, out)
        elif isinstance(state, Leading):
            self._tick_leader(state.leader, out)
        else:
            self._tick_resigned(state, out)
        return out

    def handle(self, message: RaftMessage, now_ms: int) -> Output:
        """Process one message addressed to this node."""
        self._advance_clock(now_ms)
        check(message.receiver == self.node_id, f"message for {message.receiver} at {self.node_id}")
        out = Output()
        if isinstance(message, VoteRequest):
            self._on_vote_request(message, out)
        elif isinstance(message, VoteResponse):
            self._on_vote_response(message, out)
        elif isinstance(message, BeginQuorumEpochRequest):
            self._on_begin_quorum_epoch(message, out)
        elif isinstance(message, EndQuorumEpochRequest):
            self._on_end_quorum_epoch(message, out)
        elif isinstance(message, BeginQuorumEpochResponse | EndQuorumEpochResponse):
            self._on_quorum_epoch_response(message, out)
        elif isinstance(message, FetchRequest):
            self._on_fetch_request(message, out)
        elif isinstance(message, FetchResponse):
            self._on_fetch_response(message, out)
        elif isinstance(message, FetchSnapshotRequest):
            self._on_fetch_snapshot_request(message, out)
        elif isinstance(message, FetchSnapshotResponse):
            self._on_fetch_snapshot_response(message, out)
        return out

    def append(self, payloads: list[bytes], now_ms: int) -> tuple[int, Output]:
        """Append data entries as the leader; returns the first entry's offset.

        Raises :class:`NotLeaderError` on any other node. An offset is committed once
        a :class:`CommitEvent` reaches past it; after a leader change it may never be.
        """
        self._advance_clock(now_ms)
        if not isinstance(self.state, Leading):
            raise NotLeaderError(f"node {self.node_id} is {self.role.value} in epoch {self.epoch}")
        first = self.log.end_offset
        entries = [
            Entry(first + i, self.epoch, bytes(payload)) for i, payload in enumerate(payloads)
        ]
        out = Output()
        self._append_as_leader(self.state.leader, entries, out)
        return first, out

    def create_snapshot(self, end_offset: int, payload: bytes) -> Output:
        """Store the state machine's image of every entry below ``end_offset``.

        ``end_offset`` must be committed and already handed to the state machine; the
        log is then cut below it. Followers behind it will fetch this snapshot.
        """
        if not self.log.start_offset < end_offset <= self.applied_end:
            raise InvalidSnapshotError(
                f"snapshot at {end_offset} outside ({self.log.start_offset}, {self.applied_end}]"
            )
        epoch = self.log.epoch_at(end_offset - 1)
        check(epoch is not None, f"no epoch at {end_offset - 1}")
        snapshot = Snapshot(OffsetAndEpoch(end_offset, epoch or 0), bytes(payload))
        out = Output()
        self._install_snapshot(snapshot, out)
        return out

    def resign(self, now_ms: int) -> Output:
        """Leave leadership gracefully (EndQuorumEpoch), as before a controlled shutdown."""
        self._advance_clock(now_ms)
        if not isinstance(self.state, Leading):
            raise NotLeaderError(f"node {self.node_id} is not the leader")
        out = Output()
        self._become_resigned(self.state.leader, out)
        return out

    def peer_refused(self, peer: NodeId, now_ms: int) -> Output:
        """``peer``'s address refused a connection: nothing listens there, its process is gone.

        A follower of ``peer`` does not wait for the rest of the fetch timeout: it stands
        for election (a voter; an observer looks for the leader) at a random point within
        one election timeout from now, and from now on grants pre-votes (it no longer hears
        from that leader). The randomness keeps the followers, who see the refusal at the
        same moment, from standing together and splitting the vote. Safety does not depend
        on when a node stands: votes, epochs and the log check are unchanged. A successful
        fetch from ``peer`` clears this.
        """
        self._advance_clock(now_ms)
        state = self.state
        if isinstance(state, Follower) and state.leader_id == peer and not state.leader_refused:
            state.leader_refused = True
            soon = self.now_ms + self.rng.randrange(self.config.election_timeout_ms)
            state.fetch_deadline_ms = min(state.fetch_deadline_ms, soon)
        return Output()

    def describe_quorum(self) -> QuorumStatus:
        """The leader's view of every replica (raises ``NotLeaderError`` elsewhere)."""
        if not isinstance(self.state, Leading):
            raise NotLeaderError(f"node {self.node_id} is not the leader")
        return self.state.leader.status(self.high_watermark)

    def next_deadline_ms(self) -> int:
        """The earliest time :meth:`tick` has something to do (for the driver's timer)."""
        state = self.state
        if isinstance(state, Unattached):
            if self.config.is_voter:
                return state.election_deadline_ms
            return state.discovery_deadline_ms
        if isinstance(state, Candidate | Prospective):
            return min(state.election_deadline_ms, state.request_deadline_ms)
        if isinstance(state, Follower):
            deadline = state.fetch_deadline_ms
            return min(deadline, state.request_deadline_ms) if state.in_flight else self.now_ms
        if isinstance(state, Resigned):
            return min(state.election_deadline_ms, state.request_deadline_ms)
        leader = state.leader
        deadlines = [leader.begin_deadline_ms, self.now_ms + self.config.fetch_timeout_ms // 2]
        deadlines += [parked.deadline_ms for parked in leader.parked.values()]
        return min(deadlines)

    def election_state(self) -> ElectionState:
        """The election state this node's role implies (what must be durable)."""
        state = self.state
        if isinstance(state, Unattached | Prospective):
            return ElectionState(state.epoch, state.voted_for, None)
        if isinstance(state, Follower):
            return ElectionState(state.epoch, state.voted_for, state.leader_id)
        if isinstance(state, Candidate):
            return ElectionState(state.epoch, self.node_id, None)
        return ElectionState(state.epoch, self.node_id, self.node_id)

    # ---- recovery and clock ---------------------------------------------------

    def _recover_state(self, election: ElectionState) -> RoleState:
        if election.leader_id == self.node_id:
            return Resigned(
                election.epoch, self._election_deadline(), self.now_ms, preferred_successors=()
            )
        if election.leader_id is not None:
            return Follower(
                election.epoch, election.leader_id, election.voted_for, self._fetch_deadline()
            )
        return Unattached(election.epoch, election.voted_for, self._election_deadline())

    def _advance_clock(self, now_ms: int) -> None:
        check(now_ms >= self.now_ms, f"clock went back from {self.now_ms} to {now_ms}")
        self.now_ms = now_ms

    def _election_deadline(self) -> int:
        timeout = self.config.election_timeout_ms
        return self.now_ms + timeout + self.rng.randrange(timeout)

    def _fetch_deadline(self) -> int:
        return self.now_ms + self.config.fetch_timeout_ms

    # ---- transitions ----------------------------------------------------------

    def _transition(self, state: RoleState, out: Output) -> None:
        """Enter ``state``; persist the election state and tell the listener if they changed."""
        old_epoch, old_leader = self.epoch, self.leader_id
        check(state.epoch >= old_epoch, f"epoch would go back from {old_epoch} to {state.epoch}")
        if isinstance(self.state, Leading):
            self.state.leader.parked.clear()
        self.state = state
        election = self.election_state()
        if election != self._durable_election:
            out.persist.append(SaveElectionState(election))
            self._durable_election = election
        if (self.epoch, self.leader_id) != (old_epoch, old_leader):
            out.events.append(LeaderChangeEvent(LeaderAndEpoch(self.leader_id, self.epoch)))

    def _become_unattached(self, epoch: int, out: Output, voted_for: NodeId | None = None) -> None:
        self._transition(Unattached(epoch, voted_for, self._kept_deadline(), self.now_ms), out)

    def _kept_deadline(self) -> int:
        """The election deadline a node keeps when it merely sees a higher epoch.

        Only granting a vote or hearing from the leader restarts the election timer;
        otherwise a candidate with a stale log, bumping the epoch again and again,
        would keep the up-to-date voters from ever standing (a live-lock).
        """
        state = self.state
        if isinstance(state, Unattached | Prospective | Candidate | Resigned):
            return state.election_deadline_ms
        if isinstance(state, Follower):
            return state.fetch_deadline_ms
        return self._election_deadline()

    def _become_follower(self, epoch: int, leader_id: NodeId, out: Output) -> None:
        # A vote cast in this epoch (for another node or, as a candidate, for itself) stands.
        voted_for = self.election_state().voted_for if epoch == self.epoch else None
        follower = Follower(epoch, leader_id, voted_for, self._fetch_deadline())
        self._transition(follower, out)
        self._send_fetch(follower, out)

    def _stand_for_election(self, out: Output) -> None:
        """Start with a pre-vote round, or straight as a candidate when alone."""
        if self.config.majority == 1:
            self._become_candidate(out)
            return
        prospective = Prospective(
            self.epoch,
            self.election_state().voted_for,  # any vote cast in this epoch still stands
            self._election_deadline(),
            self.now_ms + self.config.request_timeout_ms,
            granted={self.node_id},
            abandoned_leader=self.leader_id,
        )
        self._transition(prospective, out)
        for voter in sorted(self.config.voter_ids - {self.node_id}):
            out.messages.append(self._vote_request(voter, pre_vote=True))

    def _become_candidate(self, out: Output) -> None:
        check(self.config.is_voter, "an observer never stands for election")
        candidate = Candidate(
            self.epoch + 1,
            self._election_deadline(),
            self.now_ms + self.config.request_timeout_ms,
            granted={self.node_id},
        )
        self._transition(candidate, out)
        if len(candidate.granted) >= self.config.majority:
            self._become_leader(out)
            return
        for voter in sorted(self.config.voter_ids - {self.node_id}):
            out.messages.append(self._vote_request(voter))

    def _vote_request(self, voter: NodeId, pre_vote: bool = False) -> VoteRequest:
        """A Vote request for this epoch (a pre-vote asks about the next one)."""
        epoch = self.epoch + 1 if pre_vote else self.epoch
        position = self.log.end_offset_and_epoch()
        return VoteRequest(self.node_id, voter, epoch, position, pre_vote=pre_vote)

    def _become_leader(self, out: Output) -> None:
        leader = LeaderState(
            self.node_id,
            self.epoch,
            self.log.end_offset,
            self.config.voter_ids,
            self.now_ms,
            begin_deadline_ms=self.now_ms + self.config.request_timeout_ms,
        )
        self._transition(Leading(leader), out)
        for voter in leader.unacknowledged():
            out.messages.append(BeginQuorumEpochRequest(self.node_id, voter, self.epoch))
        start = self.log.end_offset
        self._append_as_leader(
            leader, [Entry(start, self.epoch, LEADER_CHANGE_PAYLOAD, control=True)], out
        )

    def _become_resigned(self, leader: LeaderState, out: Output) -> None:
        successors = leader.successors_by_progress()
        resigned = Resigned(
            self.epoch,
            self._election_deadline(),
            self.now_ms + self.config.request_timeout_ms,
            successors,
            unacknowledged=set(successors),
        )
        self._transition(resigned, out)
        for voter in successors:
            out.messages.append(EndQuorumEpochRequest(self.node_id, voter, self.epoch, successors))

    def _observe_epoch(self, epoch: int, leader_id: NodeId | None, out: Output) -> bool:
        """React to an epoch and leader named by a peer; False if the message is stale."""
        if epoch < self.epoch:
            return False
        if epoch > self.epoch:
            if leader_id is not None and leader_id != self.node_id:
                self._become_follower(epoch, leader_id, out)
            else:
                self._become_unattached(epoch, out)
        elif (
            leader_id is not None
            and leader_id != self.node_id
            and isinstance(self.state, Unattached | Prospective | Candidate)
        ):
            self._become_follower(epoch, leader_id, out)
        return True

    # ---- timers ---------------------------------------------------------------

    def _tick_unattached(self, state: Unattached, out: Output) -> None:
        if self.config.is_voter:
            if self.now_ms >= state.election_deadline_ms:
                self._stand_for_election(out)
        elif self.now_ms >= state.discovery_deadline_ms:
            state.discovery_deadline_ms = self.now_ms + self.config.request_timeout_ms
            voter = self.rng.choice(sorted(self.config.voter_ids))
            out.messages.append(
                FetchRequest(self.node_id, voter, self.epoch, *self._fetch_position())
            )

    def _tick_prospective(self, state: Prospective, out: Output) -> None:
        if self.now_ms >= state.election_deadline_ms:
            self._stand_for_election(out)  # a new round of pre-votes, same epoch
        elif self.now_ms >= state.request_deadline_ms:
            state.request_deadline_ms = self.now_ms + self.config.request_timeout_ms
            silent = self.config.voter_ids - state.granted - state.rejected
            out.messages.extend(self._vote_request(v, pre_vote=True) for v in sorted(silent))

    def _tick_candidate(self, state: Candidate, out: Output) -> None:
        if self.now_ms >= state.election_deadline_ms:
            self._stand_for_election(out)  # lost: ask again before bumping the epoch
        elif self.now_ms >= state.request_deadline_ms:
            state.request_deadline_ms = self.now_ms + self.config.request_timeout_ms
            silent = self.config.voter_ids - state.granted - state.rejected
            out.messages.extend(self._vote_request(v) for v in sorted(silent))

    def _tick_resigned(self, state: Resigned, out: Output) -> None:
        if self.now_ms >= state.election_deadline_ms:
            self._stand_for_election(out)
        elif self.now_ms >= state.request_deadline_ms and state.unacknowledged:
            state.request_deadline_ms = self.now_ms + self.config.request_timeout_ms
            for voter in sorted(state.unacknowledged):
                out.messages.append(
                    EndQuorumEpochRequest(
                        self.node_id, voter, self.epoch, state.preferred_successors
                    )
                )

    def _tick_leader(self, leader: LeaderState, out: Output) -> None:
        window_ms = self.config.fetch_timeout_ms * 3 // 2
        if not leader.has_quorum_contact(self.now_ms, window_ms):
            self._become_resigned(leader, out)  # cut off from the majority: step down
            return
        if self.now_ms >= leader.begin_deadline_ms:
            leader.begin_deadline_ms = self.now_ms + self.config.request_timeout_ms
            for voter in leader.unacknowledged():
                out.messages.append(BeginQuorumEpochRequest(self.node_id, voter, self.epoch))
        self._expire_parked_fetches(leader, out)

    # ---- commits and snapshots -------------------------------------------------

    def _append_as_leader(self, leader: LeaderState, entries: list[Entry], out: Output) -> None:
        for entry in entries:
            self.log.append(entry)
        out.persist.append(AppendEntries(tuple(entries)))
        leader.update_local(self.log.end_offset, self.now_ms)
        self._leader_update_high_watermark(leader, out)
        self._complete_parked_fetches(leader, out)

    def _leader_update_high_watermark(self, leader: LeaderState, out: Output) -> bool:
        offset = leader.majority_offset()
        if offset is None or offset <= self.high_watermark:
            return False
        self._advance_high_watermark(offset, out)
        return True

    def _advance_high_watermark(self, offset: int, out: Output) -> None:
        """Raise the high watermark (never lower it) and hand new commits over."""
        offset = min(offset, self.log.end_offset)
        if offset <= self.high_watermark:
            return
        self.high_watermark = offset
        if self.applied_end < self.log.start_offset and self.snapshot is not None:
            out.events.append(LoadSnapshotEvent(self.snapshot))
            self.applied_end = self.snapshot.snapshot_id.offset
        if self.applied_end < offset:
            entries = self.log.entries(self.applied_end, offset)
            data = tuple(entry for entry in entries if not entry.control)
            out.events.append(CommitEvent(data, offset))
            self.applied_end = offset

    def _install_snapshot(self, snapshot: Snapshot, out: Output) -> None:
        """Keep ``snapshot`` as the latest and cut the log below it."""
        end = snapshot.snapshot_id.offset
        check(end > self.log.start_offset, f"snapshot {end} not above log start")
        out.persist.append(SaveSnapshot(snapshot))
        self.snapshot = snapshot
        self.log.delete_before(snapshot.snapshot_id)
        if end > self.high_watermark:
            self.high_watermark = end
        if self.applied_end < end:
            out.events.append(LoadSnapshotEvent(snapshot))
            self.applied_end = end
