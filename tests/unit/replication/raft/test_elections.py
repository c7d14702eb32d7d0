"""Election transitions of the Raft core, one at a time: votes, BeginQuorumEpoch, resigning."""

from __future__ import annotations

import pytest

from log_engine.errors import ErrorCode
from log_engine.replication.raft import (
    AppendEntries,
    CommitEvent,
    ElectionState,
    NotLeaderError,
    OffsetAndEpoch,
    Role,
    SaveElectionState,
)
from log_engine.replication.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    VoteRequest,
    VoteResponse,
)
from tests.unit.replication.raft.helpers import ELECTION_TIMEOUT_MS, FETCH_TIMEOUT_MS, Harness


def vote_request(epoch: int, end: int, last_epoch: int, sender: int = 2) -> VoteRequest:
    return VoteRequest(sender, 1, epoch, OffsetAndEpoch(end, last_epoch))


def only_vote_response(out) -> VoteResponse:  # type: ignore[no-untyped-def]
    [response] = [m for m in out.messages if isinstance(m, VoteResponse)]
    return response


def test_a_lone_voter_elects_itself_and_commits_at_once() -> None:
    node = Harness(1, voters=[1])
    assert node.node.role is Role.LEADER and node.node.epoch == 1
    offset, out = node.node.append([b"a", b"b"], node.now_ms)
    node.apply(out)
    assert offset == 1  # offset 0 is the leader-change entry
    commits = [e for e in out.events if isinstance(e, CommitEvent)]
    assert [x.payload for c in commits for x in c.entries] == [b"a", b"b"]
    assert node.node.high_watermark == 3


def test_vote_is_granted_to_an_up_to_date_candidate_and_saved_before_the_answer() -> None:
    node = Harness(1, log_epochs=[1, 1, 2])
    out = node.handle(vote_request(epoch=3, end=3, last_epoch=2))
    assert only_vote_response(out).vote_granted
    assert SaveElectionState(ElectionState(3, voted_for=2)) in out.persist
    assert node.storage.load().election == ElectionState(3, voted_for=2)


@pytest.mark.parametrize(
    ("end", "last_epoch"),
    [(10, 1), (2, 2)],  # an older last epoch loses even when longer; same epoch, shorter log
    ids=["older-last-epoch", "shorter-log"],
)
def test_vote_is_refused_to_a_candidate_with_a_stale_log(end: int, last_epoch: int) -> None:
    node = Harness(1, log_epochs=[1, 1, 2])
    out = node.handle(vote_request(epoch=3, end=end, last_epoch=last_epoch))
    response = only_vote_response(out)
    assert not response.vote_granted and response.epoch == 3  # the epoch still moves on
    assert node.storage.load().election == ElectionState(3)


def test_one_vote_per_epoch_even_across_a_restart() -> None:
    node = Harness(1, log_epochs=[1])
    assert only_vote_response(node.handle(vote_request(2, 1, 1, sender=2))).vote_granted
    node.restart()
    refused = only_vote_response(node.handle(vote_request(2, 1, 1, sender=3)))
    assert not refused.vote_granted
    again = only_vote_response(node.handle(vote_request(2, 1, 1, sender=2)))
    assert again.vote_granted  # a retried request from the same candidate


def test_a_stale_epoch_vote_request_is_fenced() -> None:
    node = Harness(1, log_epochs=[1], election=ElectionState(5))
    response = only_vote_response(node.handle(vote_request(4, 9, 4)))
    assert response.error is ErrorCode.FENCED_LEADER_EPOCH and response.epoch == 5


def test_a_timed_out_voter_first_asks_for_pre_votes_without_changing_its_epoch() -> None:
    node = Harness(1, log_epochs=[1, 1])
    out = node.tick(300)
    assert node.node.role is Role.PROSPECTIVE and node.node.epoch == 1
    assert out.persist == []
    requests = [m for m in out.messages if isinstance(m, VoteRequest)]
    assert {m.receiver for m in requests} == {2, 3}
    assert all(m.pre_vote and m.epoch == 2 for m in requests)
    node.handle(VoteResponse(2, 1, ErrorCode.NONE, 1, None, False, pre_vote=True))
    node.handle(VoteResponse(3, 1, ErrorCode.NONE, 1, None, False, pre_vote=True))
    assert node.node.role is Role.PROSPECTIVE and node.node.epoch == 1  # refused: no bump


def test_pre_votes_are_answered_without_any_change_on_the_voter() -> None:
    node = Harness(1, log_epochs=[1, 1, 2])
    before = node.storage.load()
    request = VoteRequest(2, 1, 3, OffsetAndEpoch(3, 2), pre_vote=True)
    out = node.handle(request)
    assert only_vote_response(out).vote_granted and only_vote_response(out).pre_vote
    stale = VoteRequest(3, 1, 3, OffsetAndEpoch(2, 2), pre_vote=True)
    assert not only_vote_response(node.handle(stale)).vote_granted
    assert node.node.epoch == 2 and node.storage.load() == before
    assert only_vote_response(node.handle(request)).vote_granted  # nothing was recorded


def test_a_follower_still_hearing_from_its_leader_refuses_pre_votes() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2))
    request = VoteRequest(3, 1, 5, OffsetAndEpoch(9, 4), pre_vote=True)
    assert not only_vote_response(node.handle(request)).vote_granted
    node.tick(FETCH_TIMEOUT_MS)  # the leader went quiet: this node stands itself
    assert node.node.role is Role.PROSPECTIVE
    assert only_vote_response(node.handle(request)).vote_granted


def test_a_prospective_with_a_majority_of_pre_votes_stands_as_candidate_then_leads() -> None:
    node = Harness(1, log_epochs=[1, 1])
    out = node.stand(2)
    assert node.node.role is Role.CANDIDATE and node.node.epoch == 2
    assert SaveElectionState(ElectionState(2, voted_for=1)) == out.persist[0]
    requests = [m for m in out.messages if isinstance(m, VoteRequest)]
    assert {m.receiver for m in requests} == {2, 3} and not any(m.pre_vote for m in requests)
    assert requests[0].last_offset_and_epoch == OffsetAndEpoch(2, 1)
    out = node.handle(VoteResponse(2, 1, ErrorCode.NONE, 2, None, True))
    assert node.node.role is Role.LEADER
    [append] = [a for a in out.persist if isinstance(a, AppendEntries)]
    assert append.entries[0].offset == 2 and append.entries[0].control
    assert {m.receiver for m in out.messages if isinstance(m, BeginQuorumEpochRequest)} == {2, 3}


def test_a_prospective_does_not_go_back_to_the_leader_it_stopped_hearing_from() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2))
    node.tick(FETCH_TIMEOUT_MS)
    assert node.node.role is Role.PROSPECTIVE
    node.handle(VoteResponse(3, 1, ErrorCode.NONE, 4, 2, False, pre_vote=True))
    assert node.node.role is Role.PROSPECTIVE  # 3 still follows 2; that proves nothing
    node.handle(VoteResponse(3, 1, ErrorCode.NONE, 5, 3, False, pre_vote=True))
    assert node.node.role is Role.FOLLOWER and node.node.leader_id == 3  # a newer epoch


def test_a_candidate_that_sees_a_leader_follows_it() -> None:
    node = Harness(1)
    node.stand(2)
    out = node.handle(BeginQuorumEpochRequest(3, 1, node.node.epoch))
    assert node.node.role is Role.FOLLOWER and node.node.leader_id == 3
    assert any(isinstance(m, FetchRequest) and m.receiver == 3 for m in out.messages)


def test_a_follower_stands_for_election_when_the_leader_goes_quiet() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2))
    assert node.node.role is Role.FOLLOWER
    node.tick(FETCH_TIMEOUT_MS - 1)
    assert node.node.role is Role.FOLLOWER
    node.tick(1)
    assert node.node.role is Role.PROSPECTIVE and node.node.epoch == 4


def test_a_follower_rejects_votes_while_it_knows_a_leader() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2))
    assert not only_vote_response(node.handle(vote_request(4, 5, 4, sender=3))).vote_granted


def test_a_higher_epoch_does_not_restart_the_election_timer() -> None:
    node = Harness(1, log_epochs=[1, 1])
    node.tick(10)
    deadline = node.node.next_deadline_ms()
    node.handle(vote_request(epoch=5, end=1, last_epoch=1))  # stale candidate, refused
    assert node.node.next_deadline_ms() == deadline


def test_graceful_resign_names_the_most_caught_up_successor_first() -> None:
    leader = Harness(1, log_epochs=[1])
    leader.elect(2)
    epoch = leader.node.epoch
    end = leader.node.log.end_offset
    leader.handle(FetchRequest(3, 1, epoch, end, epoch))
    leader.handle(FetchRequest(2, 1, epoch, 1, 1))
    out = leader.apply(leader.node.resign(leader.now_ms))
    assert leader.node.role is Role.RESIGNED
    ends = [m for m in out.messages if isinstance(m, EndQuorumEpochRequest)]
    assert ends[0].preferred_successors == (3, 2)
    with pytest.raises(NotLeaderError):
        leader.node.append([b"x"], leader.now_ms)


def test_the_leader_describes_each_replicas_progress() -> None:
    leader = Harness(1, voters=[1, 2, 3])
    leader.elect(2)
    leader.handle(FetchRequest(2, 1, 1, 1, 1))
    leader.handle(FetchRequest(7, 1, 1, 0, 0))  # an observer (a broker)
    status = leader.node.describe_quorum()
    assert (status.leader_id, status.epoch, status.high_watermark) == (1, 1, 1)
    assert [(r.node_id, r.end_offset) for r in status.voters] == [(1, 1), (2, 1), (3, 0)]
    assert [r.node_id for r in status.observers] == [7]
    with pytest.raises(NotLeaderError):
        Harness(2).node.describe_quorum()


def test_the_preferred_successor_stands_at_once_the_next_waits_its_turn() -> None:
    first = Harness(3, election=ElectionState(4, leader_id=1))
    first.handle(EndQuorumEpochRequest(1, 3, 4, preferred_successors=(3, 2)))
    assert first.node.role is Role.CANDIDATE and first.node.epoch == 5  # no pre-vote
    second = Harness(2, election=ElectionState(4, leader_id=1))
    second.handle(EndQuorumEpochRequest(1, 2, 4, preferred_successors=(3, 2)))
    assert second.node.role is Role.UNATTACHED
    assert second.node.next_deadline_ms() >= second.now_ms + 50  # one backoff step


def test_a_leader_cut_off_from_the_majority_resigns() -> None:
    leader = Harness(1)
    leader.elect(2)
    assert leader.node.role is Role.LEADER
    leader.tick(FETCH_TIMEOUT_MS * 3 // 2 + 1)
    assert leader.node.role is Role.RESIGNED
    leader.tick(1000)
    assert leader.node.role is Role.PROSPECTIVE


def test_a_restarted_leader_comes_back_resigned() -> None:
    node = Harness(1)
    node.elect(2)
    node.restart()
    assert node.node.role is Role.RESIGNED and node.node.epoch == 1


def test_a_fetch_from_an_old_epoch_is_fenced_and_names_the_leader() -> None:
    leader = Harness(1)
    leader.elect(2)
    out = leader.handle(FetchRequest(3, 1, 0, 0, 0))
    [response] = out.messages
    assert isinstance(response, FetchResponse)
    assert response.error is ErrorCode.FENCED_LEADER_EPOCH
    assert (response.epoch, response.leader_id) == (1, 1)


def test_an_observer_finds_the_leader_and_never_votes() -> None:
    observer = Harness(9, voters=[1, 2, 3])
    out = observer.tick(10_000)
    assert observer.node.role is Role.UNATTACHED  # never a candidate
    [probe] = out.messages
    assert isinstance(probe, FetchRequest)
    observer.handle(
        FetchResponse(probe.receiver, 9, ErrorCode.FENCED_LEADER_EPOCH, 3, 2, probe.fetch_offset)
    )
    assert observer.node.role is Role.FOLLOWER and observer.node.leader_id == 2
    refused = only_vote_response(observer.handle(VoteRequest(1, 9, 4, OffsetAndEpoch(9, 3))))
    assert not refused.vote_granted


def test_a_follower_refused_by_its_leader_stands_within_one_election_timeout() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2), fetch_timeout_ms=60_000)
    node.apply(node.node.peer_refused(3, node.now_ms))  # not its leader: nothing changes
    node.tick(ELECTION_TIMEOUT_MS)
    assert node.node.role is Role.FOLLOWER
    node.apply(node.node.peer_refused(2, node.now_ms))
    node.tick(ELECTION_TIMEOUT_MS)
    assert node.node.role is Role.PROSPECTIVE and node.node.epoch == 4


def test_a_follower_refused_by_its_leader_grants_pre_votes_at_once() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2), fetch_timeout_ms=60_000)
    request = VoteRequest(3, 1, 5, OffsetAndEpoch(9, 4), pre_vote=True)
    assert not only_vote_response(node.handle(request)).vote_granted
    node.apply(node.node.peer_refused(2, node.now_ms))
    assert only_vote_response(node.handle(request)).vote_granted
    assert node.node.role is Role.FOLLOWER and node.node.epoch == 4  # a pre-vote changes nothing
    real = VoteRequest(3, 1, 5, OffsetAndEpoch(9, 4))
    assert only_vote_response(node.handle(real)).vote_granted  # one vote in epoch 5, for 3
    other = VoteRequest(2, 1, 5, OffsetAndEpoch(9, 4))
    assert not only_vote_response(node.handle(other)).vote_granted


def test_a_fetch_answered_after_a_refusal_clears_it() -> None:
    node = Harness(1, election=ElectionState(4, leader_id=2), fetch_timeout_ms=60_000)
    node.apply(node.node.peer_refused(2, node.now_ms))
    node.handle(FetchResponse(2, 1, ErrorCode.NONE, 4, 2, 0, high_watermark=0))
    request = VoteRequest(3, 1, 5, OffsetAndEpoch(9, 4), pre_vote=True)
    assert not only_vote_response(node.handle(request)).vote_granted
    node.tick(2 * ELECTION_TIMEOUT_MS)
    assert node.node.role is Role.FOLLOWER
