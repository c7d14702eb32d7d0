"""RaftLog: epoch lookups, fetch validation and the truncation that follows divergence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from log_engine.invariants import InvariantViolation
from log_engine.replication.raft import Entry, OffsetAndEpoch, RaftLog
from tests.unit.replication.raft.helpers import entries


def log_of(epochs: list[int], start: OffsetAndEpoch | None = None) -> RaftLog:
    offset = start.offset if start else 0
    return RaftLog(start, entries(epochs, offset))


def test_end_offset_for_epoch_answers_as_offset_for_leader_epoch() -> None:
    log = log_of([1, 1, 3, 3, 3, 6])
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)  # largest epoch not above 2
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(5, 3)
    assert log.end_offset_for_epoch(9) == OffsetAndEpoch(6, 6)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)


def test_a_snapshot_answers_for_the_offset_below_the_log_start() -> None:
    log = log_of([4, 4], start=OffsetAndEpoch(10, 3))
    assert log.epoch_at(9) == 3 and log.epoch_at(10) == 4 and log.epoch_at(8) is None
    assert log.validate_fetch(5, 2).snapshot_id == OffsetAndEpoch(10, 3)
    assert log.validate_fetch(10, 2).snapshot_id == OffsetAndEpoch(10, 3)
    assert log.validate_fetch(10, 3).valid
    assert log.validate_fetch(12, 4).valid


def test_a_read_is_bounded_in_entries_and_bytes_but_always_makes_progress() -> None:
    log = RaftLog(None, [Entry(i, 1, b"x" * 10) for i in range(10)])
    assert len(log.read(0, max_entries=3, max_bytes=1000)) == 3
    assert len(log.read(0, max_entries=100, max_bytes=25)) == 2
    assert len(log.read(4, max_entries=100, max_bytes=1)) == 1  # one oversized entry still goes
    assert log.read(10, 5, 100) == []


def test_epochs_and_offsets_only_go_forward() -> None:
    log = log_of([2])
    with pytest.raises(InvariantViolation):
        log.append(Entry(1, 1, b""))
    with pytest.raises(InvariantViolation):
        log.append(Entry(5, 2, b""))


def test_delete_before_keeps_entries_that_agree_with_the_snapshot() -> None:
    log = log_of([1, 1, 2, 2])
    log.delete_before(OffsetAndEpoch(2, 1))
    assert (log.start_offset, log.end_offset) == (2, 4)
    other = log_of([1, 1, 2, 2])
    other.delete_before(OffsetAndEpoch(3, 5))  # a leader's snapshot this log disagrees with
    assert (other.start_offset, other.end_offset, other.last_epoch) == (3, 3, 5)


@st.composite
def diverged_logs(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    """A common prefix, then a leader suffix and a follower suffix from disjoint epochs.

    In Raft an epoch has one leader, so two logs that differ at an offset hold
    different epochs there; even epochs go to the leader's side, odd to the follower's.
    """
    prefix = sorted(draw(st.lists(st.integers(1, 4), max_size=8)))
    floor = (prefix[-1] if prefix else 0) + 1
    leader = sorted(draw(st.lists(st.integers(floor, floor + 8).map(lambda e: e * 2), max_size=8)))
    follower = sorted(
        draw(st.lists(st.integers(floor, floor + 8).map(lambda e: e * 2 + 1), max_size=8))
    )
    return prefix, leader, follower


@given(diverged_logs())
def test_fetching_converges_on_the_common_prefix(
    logs: tuple[list[int], list[int], list[int]],
) -> None:
    prefix, leader_suffix, follower_suffix = logs
    leader = log_of(prefix + leader_suffix)
    follower = log_of(prefix + follower_suffix)
    for _round in range(len(follower_suffix) + 2):
        validation = leader.validate_fetch(follower.end_offset, follower.last_epoch)
        if validation.valid:
            break
        assert validation.diverging is not None
        follower.truncate_from(follower.truncation_offset_for(validation.diverging))
    else:
        pytest.fail("the follower never found a valid fetch position")
    expected = len(prefix)
    assert follower.end_offset == expected  # the divergent tail went, nothing more
    assert follower.entries(0, expected) == leader.entries(0, expected)


@given(st.lists(st.integers(1, 5), max_size=12).map(sorted), st.data())
def test_truncating_rebuilds_the_epoch_index(epochs: list[int], data: st.DataObject) -> None:
    log = log_of(epochs)
    cut = data.draw(st.integers(0, len(epochs)))
    log.truncate_from(cut)
    rebuilt = log_of(epochs[:cut])
    for epoch in range(0, 7):
        assert log.end_offset_for_epoch(epoch) == rebuilt.end_offset_for_epoch(epoch)
