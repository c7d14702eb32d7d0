"""The election half of the core: Vote, BeginQuorumEpoch and EndQuorumEpoch handling.

A voter grants one vote per epoch, only while it knows no leader of that epoch, only
to a candidate whose log is at least as up to date as its own (later last epoch,
then longer log), and only once the vote is saved: the election state goes out as a
persist action in the same output as the response, which the driver writes first.
BeginQuorumEpoch makes the receiver a follower of the new leader; EndQuorumEpoch
(a graceful resignation) lets the most caught-up successor stand at once and the
others after a wait growing with their rank.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from log_engine.errors import ErrorCode
from log_engine.replication.raft.actions import Output
from log_engine.replication.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    VoteRequest,
    VoteResponse,
)
from log_engine.replication.raft.node_view import NodeView
from log_engine.replication.raft.states import (
    Candidate,
    Follower,
    Leading,
    Prospective,
    Resigned,
    RoleState,
    Unattached,
)
from log_engine.replication.raft.types import NodeId


class Elections(NodeView):
    """Election message handling mixed into :class:`~log_engine.replication.raft.node.RaftNode`."""

    if TYPE_CHECKING:  # provided by RaftNode

        def _transition(self, state: RoleState, out: Output) -> None: ...
        def _election_deadline(self) -> int: ...
        def _become_leader(self, out: Output) -> None: ...
        def _become_candidate(self, out: Output) -> None: ...
        def _become_follower(self, epoch: int, leader_id: NodeId, out: Output) -> None: ...

    def _on_vote_request(self, request: VoteRequest, out: Output) -> None:
        if request.pre_vote:
            self._on_pre_vote_request(request, out)
            return
        if request.epoch > self.epoch:
            self._become_unattached(request.epoch, out)
        granted = self._may_vote_for(request)
        state = self.state
        if granted and isinstance(state, Unattached | Prospective) and state.voted_for is None:
            # The vote is saved (persist action) before the response leaves (Output order).
            self._transition(
                Unattached(self.epoch, request.sender, self._election_deadline()), out
            )
        out.messages.append(
            VoteResponse(
                self.node_id,
                request.sender,
                self._epoch_error(request.epoch),
                self.epoch,
                self.leader_id,
                granted,
            )
        )

    def _on_pre_vote_request(self, request: VoteRequest, out: Output) -> None:
        """Would this node vote for the sender in ``request.epoch``? Changes nothing here."""
        state = self.state
        granted = (
            self.config.is_voter
            and request.sender in self.config.voter_ids
            and request.epoch > self.epoch
            # a follower still hearing from its leader protects it from a rejoining node
            and not (
                isinstance(state, Follower)
                and self.now_ms < state.fetch_deadline_ms
                and not state.leader_refused
            )
            and not isinstance(state, Leading)
            and request.last_offset_and_epoch.at_least_as_up_to_date_as(
                self.log.end_offset_and_epoch()
            )
        )
        out.messages.append(
            VoteResponse(
                self.node_id,
                request.sender,
                ErrorCode.NONE,
                self.epoch,
                self.leader_id,
                granted,
                pre_vote=True,
            )
        )

    def _may_vote_for(self, request: VoteRequest) -> bool:
        state = self.state
        if request.epoch != self.epoch or not isinstance(state, Unattached | Prospective):
            return False
        if not self.config.is_voter or request.sender not in self.config.voter_ids:
            return False
        if state.voted_for is not None:
            return state.voted_for == request.sender
        return request.last_offset_and_epoch.at_least_as_up_to_date_as(
            self.log.end_offset_and_epoch()
        )

    def _on_vote_response(self, response: VoteResponse, out: Output) -> None:
        if response.pre_vote:
            self._on_pre_vote_response(response, out)
            return
        if not self._observe_epoch(response.epoch, response.leader_id, out):
            return
        state = self.state
        if not isinstance(state, Candidate) or response.epoch != state.epoch:
            return
        if response.vote_granted:
            state.granted.add(response.sender)
            state.rejected.discard(response.sender)
            if len(state.granted) >= self.config.majority:
                self._become_leader(out)
        else:
            state.rejected.add(response.sender)  # a lost election ends at its deadline

    def _on_pre_vote_response(self, response: VoteResponse, out: Output) -> None:
        state = self.state
        stale_leader = state.abandoned_leader if isinstance(state, Prospective) else None
        named = response.leader_id
        if response.epoch > self.epoch or named not in (None, self.node_id, stale_leader):
            # a newer epoch, or a leader other than the one this node stopped hearing from
            self._observe_epoch(response.epoch, response.leader_id, out)
        state = self.state
        if not isinstance(state, Prospective) or response.epoch > state.epoch:
            return
        if response.vote_granted:
            state.granted.add(response.sender)
            state.rejected.discard(response.sender)
            if len(state.granted) >= self.config.majority:
                self._become_candidate(out)
        else:
            state.rejected.add(response.sender)

    def _on_begin_quorum_epoch(self, request: BeginQuorumEpochRequest, out: Output) -> None:
        if request.epoch > self.epoch or (
            request.epoch == self.epoch
            and isinstance(self.state, Unattached | Prospective | Candidate)
        ):
            self._become_follower(request.epoch, request.sender, out)
        out.messages.append(
            BeginQuorumEpochResponse(
                self.node_id,
                request.sender,
                self._epoch_error(request.epoch),
                self.epoch,
                self.leader_id,
            )
        )

    def _on_end_quorum_epoch(self, request: EndQuorumEpochRequest, out: Output) -> None:
        state = self.state
        following = isinstance(state, Follower) and state.leader_id == request.sender
        if self.config.is_voter and (
            request.epoch > self.epoch or (request.epoch == self.epoch and following)
        ):
            voted_for = state.voted_for if isinstance(state, Follower) and following else None
            self._become_unattached(request.epoch, out, voted_for)
            successors = request.preferred_successors
            if successors and successors[0] == self.node_id:
                self._become_candidate(out)  # no leader left to protect: skip the pre-vote
            elif isinstance(self.state, Unattached):
                backoff_ms = self._successor_backoff(successors)
                self.state.election_deadline_ms = self.now_ms + backoff_ms
        out.messages.append(
            EndQuorumEpochResponse(
                self.node_id,
                request.sender,
                self._epoch_error(request.epoch),
                self.epoch,
                self.leader_id,
            )
        )

    def _successor_backoff(self, successors: tuple[NodeId, ...]) -> int:
        """Successors after the first wait their rank (the first stands at once)."""
        rank = successors.index(self.node_id) if self.node_id in successors else len(successors)
        step = self.config.election_backoff_max_ms
        return rank * step + self.rng.randrange(step)

    def _on_quorum_epoch_response(
        self, response: BeginQuorumEpochResponse | EndQuorumEpochResponse, out: Output
    ) -> None:
        if not self._observe_epoch(response.epoch, response.leader_id, out):
            return
        state = self.state
        if response.epoch != self.epoch or response.error != ErrorCode.NONE:
            return
        if isinstance(state, Leading) and isinstance(response, BeginQuorumEpochResponse):
            state.leader.acknowledged.add(response.sender)
        elif isinstance(state, Resigned) and isinstance(response, EndQuorumEpochResponse):
            state.unacknowledged.discard(response.sender)

    def _epoch_error(self, epoch: int) -> ErrorCode:
        return ErrorCode.FENCED_LEADER_EPOCH if epoch < self.epoch else ErrorCode.NONE
