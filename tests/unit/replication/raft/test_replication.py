"""Fetch and FetchSnapshot transitions of the Raft core: progress, commits, divergence."""

from __future__ import annotations

import pytest

from log_engine.errors import ErrorCode
from log_engine.invariants import InvariantViolation
from log_engine.replication.raft import (
    AppendEntries,
    CommitEvent,
    ElectionState,
    InvalidSnapshotError,
    LoadSnapshotEvent,
    OffsetAndEpoch,
    Role,
    SaveSnapshot,
    Snapshot,
    TruncateLog,
)
from log_engine.replication.raft.messages import (
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftMessage,
)
from tests.unit.replication.raft.helpers import Harness


def sent(out, kind: type) -> list:  # type: ignore[no-untyped-def]
    return [m for m in out.messages if isinstance(m, kind)]


def committed_payloads(node: Harness) -> list[bytes]:
    return [
        entry.payload
        for out in node.outputs
        for event in out.events
        if isinstance(event, CommitEvent)
        for entry in event.entries
    ]


def exchange(leader: Harness, follower: Harness, rounds: int = 20) -> None:
    """Let ``follower`` fetch from ``leader`` until it has nothing left to ask."""
    to_leader = leader.node.node_id
    last = follower.outputs[-1].messages
    pending: list[RaftMessage] = [m for m in last if m.receiver == to_leader]
    if not pending:
        pending = [m for m in follower.tick(1).messages if m.receiver == to_leader]
    for _ in range(rounds):
        if not pending:
            return
        me = follower.node.node_id
        answers = [m for req in pending for m in leader.handle(req).messages if m.receiver == me]
        if not answers:  # parked: let the wait expire
            answers = [m for m in leader.tick(200).messages if m.receiver == me]
        pending = [m for a in answers for m in follower.handle(a).messages]


def test_the_high_watermark_waits_for_an_entry_of_the_leaders_own_epoch() -> None:
    # Raft's rule for older epochs: entries of epoch 1 replicated to a majority are not
    # committed by the epoch-3 leader until its own leader-change entry (offset 3) is.
    leader = Harness(1, log_epochs=[1, 1, 1], election=ElectionState(2))
    leader.elect(2)
    assert leader.node.epoch == 3 and leader.node.log.end_offset == 4
    leader.handle(FetchRequest(2, 1, 3, fetch_offset=3, last_fetched_epoch=1))
    assert leader.node.high_watermark == 0 and committed_payloads(leader) == []
    out = leader.handle(FetchRequest(2, 1, 3, fetch_offset=4, last_fetched_epoch=3))
    assert leader.node.high_watermark == 4
    [commit] = [e for e in out.events if isinstance(e, CommitEvent)]
    assert [e.payload for e in commit.entries] == [b"0@1", b"1@1", b"2@1"]  # control entry left out
    assert commit.end_offset == 4


def test_a_follower_acknowledges_only_what_it_appended_and_learns_the_high_watermark() -> None:
    leader = Harness(1)
    leader.elect(3)
    leader.apply(leader.node.append([b"a", b"b"], leader.now_ms)[1])
    follower = Harness(2, election=ElectionState(1, leader_id=1))
    exchange(leader, follower)
    assert follower.node.log.end_offset == 3
    assert follower.node.high_watermark == leader.node.high_watermark == 3
    assert committed_payloads(follower) == [b"a", b"b"]
    assert follower.storage.load().entries == tuple(leader.node.log.entries(0, 3))


def test_a_follower_truncates_its_divergent_tail() -> None:
    # The epoch-4 leader has [1 1 1 3 | 4]; the follower kept [1 1 1 2 2 2] from epoch 2.
    leader = Harness(1, log_epochs=[1, 1, 1, 3], election=ElectionState(3))
    leader.elect(2)
    assert [e.epoch for e in leader.node.log.entries(0, 9)] == [1, 1, 1, 3, 4]
    follower = Harness(2, log_epochs=[1, 1, 1, 2, 2, 2], election=ElectionState(4, leader_id=1))
    [request] = sent(follower.outputs[-1], FetchRequest)
    assert (request.fetch_offset, request.last_fetched_epoch) == (6, 2)
    [response] = sent(leader.handle(request), FetchResponse)
    assert response.diverging_epoch == OffsetAndEpoch(3, 1)
    out = follower.handle(response)
    assert TruncateLog(3) in out.persist
    assert follower.node.log.end_offset == 3
    [again] = sent(out, FetchRequest)
    assert (again.fetch_offset, again.last_fetched_epoch) == (3, 1)
    exchange(leader, follower)
    assert follower.storage.load().entries == tuple(leader.node.log.entries(0, 5))


def test_truncation_below_the_high_watermark_is_refused() -> None:
    follower = Harness(2, log_epochs=[1, 1, 2], election=ElectionState(3, leader_id=1))
    follower.node.high_watermark = 3
    bogus = FetchResponse(
        1, 2, ErrorCode.NONE, 3, 1, 3, diverging_epoch=OffsetAndEpoch(1, 1)
    )
    with pytest.raises(InvariantViolation):
        follower.handle(bogus)


def test_duplicated_and_reordered_fetch_responses_are_ignored() -> None:
    leader = Harness(1)
    leader.elect(2)
    leader.apply(leader.node.append([b"a"], leader.now_ms)[1])
    follower = Harness(2, election=ElectionState(1, leader_id=1))
    [request] = sent(follower.outputs[-1], FetchRequest)
    [response] = sent(leader.handle(request), FetchResponse)
    follower.handle(response)
    assert follower.node.log.end_offset == 2
    assert follower.handle(response).persist == []  # the same answer again: no append
    assert follower.node.log.end_offset == 2


def test_a_follower_whose_leader_says_it_does_not_lead_lets_go_of_it() -> None:
    follower = Harness(2, election=ElectionState(3, voted_for=1, leader_id=1))
    assert sent(follower.outputs[-1], FetchRequest)  # it was fetching from 1
    not_leader = FetchResponse(1, 2, ErrorCode.NOT_LEADER_OR_FOLLOWER, 3, None, 0)
    follower.handle(not_leader)
    assert follower.node.role is Role.UNATTACHED and follower.node.epoch == 3
    assert follower.storage.load().election == ElectionState(3, voted_for=1)


def test_an_empty_fetch_is_parked_until_new_entries_arrive() -> None:
    leader = Harness(1)
    leader.elect(2)
    end = leader.node.log.end_offset
    assert sent(leader.handle(FetchRequest(3, 1, 1, end, 1, max_wait_ms=100)), FetchResponse)
    # the first one moved the high watermark, so it was answered; the next one waits
    assert leader.handle(FetchRequest(3, 1, 1, end, 1, max_wait_ms=100)).messages == []
    out = leader.apply(leader.node.append([b"x"], leader.now_ms)[1])
    [response] = sent(out, FetchResponse)
    assert [e.payload for e in response.entries] == [b"x"]


def test_a_parked_fetch_is_answered_when_its_wait_ends() -> None:
    leader = Harness(1)
    leader.elect(2)
    end = leader.node.log.end_offset
    leader.handle(FetchRequest(3, 1, 1, end, 1, max_wait_ms=100))
    leader.handle(FetchRequest(3, 1, 1, end, 1, max_wait_ms=100))
    assert leader.tick(99).messages == []
    [response] = sent(leader.tick(1), FetchResponse)
    assert response.entries == ()


def snapshot_leader(payload: bytes) -> Harness:
    """A leader whose log was cut below offset 4 by a snapshot."""
    leader = Harness(1, log_epochs=[1, 1, 1], election=ElectionState(1))
    leader.elect(2)
    leader.handle(FetchRequest(2, 1, 2, 4, 2))  # commits everything up to the LC entry
    leader.apply(leader.node.create_snapshot(4, payload))
    assert leader.node.log.start_offset == 4
    return leader


def test_a_far_behind_follower_fetches_the_snapshot_in_chunks() -> None:
    payload = bytes(range(256)) * 3
    leader = snapshot_leader(payload)
    follower = Harness(3, election=ElectionState(2, leader_id=1), snapshot_chunk_max_bytes=300)
    [fetch] = sent(follower.outputs[-1], FetchRequest)
    [response] = sent(leader.handle(fetch), FetchResponse)
    assert response.snapshot_id == OffsetAndEpoch(4, 2)
    request = sent(follower.handle(response), FetchSnapshotRequest)[0]
    chunks = 0
    while isinstance(request, FetchSnapshotRequest):
        [chunk] = sent(leader.handle(request), FetchSnapshotResponse)
        chunks += 1
        out = follower.handle(chunk)
        request = out.messages[0]
    assert chunks == 3
    assert SaveSnapshot(Snapshot(OffsetAndEpoch(4, 2), payload)) in out.persist
    assert LoadSnapshotEvent(Snapshot(OffsetAndEpoch(4, 2), payload)) in out.events
    assert isinstance(request, FetchRequest)
    assert (request.fetch_offset, request.last_fetched_epoch) == (4, 2)
    assert follower.storage.load().snapshot == Snapshot(OffsetAndEpoch(4, 2), payload)
    assert follower.node.high_watermark == 4


def test_a_follower_restarts_from_a_new_fetch_when_the_snapshot_is_gone() -> None:
    leader = snapshot_leader(b"state")
    follower = Harness(3, election=ElectionState(2, leader_id=1))
    [response] = sent(leader.handle(sent(follower.outputs[-1], FetchRequest)[0]), FetchResponse)
    [request] = sent(follower.handle(response), FetchSnapshotRequest)
    stale = FetchSnapshotRequest(3, 1, 2, OffsetAndEpoch(3, 1), 0, 100)
    [missing] = sent(leader.handle(stale), FetchSnapshotResponse)
    assert missing.error is ErrorCode.SNAPSHOT_NOT_FOUND
    gone = FetchSnapshotResponse(1, 3, ErrorCode.SNAPSHOT_NOT_FOUND, 2, 1, request.snapshot_id)
    assert sent(follower.handle(gone), FetchRequest)


def test_snapshots_only_cover_applied_entries() -> None:
    leader = Harness(1, voters=[1])
    leader.apply(leader.node.append([b"a"], leader.now_ms)[1])
    with pytest.raises(InvalidSnapshotError):
        leader.node.create_snapshot(5, b"too far")
    out = leader.apply(leader.node.create_snapshot(2, b"ok"))
    assert out.snapshot_ids() == [OffsetAndEpoch(2, 1)]
    assert leader.storage.load().entries == ()


def test_a_restart_reloads_the_snapshot_then_commits_the_rest_again() -> None:
    node = Harness(1, voters=[1])
    node.apply(node.node.append([b"a"], node.now_ms)[1])
    node.apply(node.node.create_snapshot(2, b"image"))
    node.apply(node.node.append([b"b"], node.now_ms)[1])
    node.restart()
    events = [e for out in node.outputs[-1:] for e in out.events]
    assert isinstance(events[0], LoadSnapshotEvent)
    appended = [a for a in node.outputs[-1].persist if isinstance(a, AppendEntries)]
    assert appended  # re-elected itself and wrote a leader-change entry
    commits = [e for e in events if isinstance(e, CommitEvent)]
    assert [x.payload for c in commits for x in c.entries] == [b"b"]

