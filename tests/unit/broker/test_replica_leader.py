"""The leader's ISR and high watermark rules (log_engine.broker.replica.leader)."""

from __future__ import annotations

import asyncio

from log_engine.broker.replica.leader import AckWaiters, LeaderState
from log_engine.metadata.types import PartitionState

STATE = PartitionState("t", 0, 1, 1, 1, (1, 2, 3), (1, 2, 3))


def test_high_watermark_is_the_smallest_log_end_of_the_isr() -> None:
    leader = LeaderState(STATE, 1, epoch_start_offset=0, now_ms=0)
    assert leader.high_watermark(10) == -1  # followers not heard from yet hold it back
    leader.record_fetch(2, 7, leader_end=10, now_ms=1)
    leader.record_fetch(3, 4, leader_end=10, now_ms=1)
    assert leader.high_watermark(10) == 4
    leader.update_state(PartitionState("t", 0, 1, 1, 2, (1, 2, 3), (1, 2)), now_ms=2)
    assert leader.high_watermark(10) == 7  # 3 left the ISR
    assert leader.high_watermark(5) == 5  # never above the leader's own log end


def test_a_pending_isr_change_counts_the_larger_set() -> None:
    leader = LeaderState(STATE, 1, epoch_start_offset=0, now_ms=0)
    leader.record_fetch(2, 9, leader_end=10, now_ms=1)
    leader.record_fetch(3, 2, leader_end=10, now_ms=1)
    leader.pending_isr = (1, 2)  # shrink asked, not yet accepted
    assert leader.high_watermark(10) == 2


def test_a_follower_not_caught_up_for_the_lag_time_is_lagging() -> None:
    leader = LeaderState(STATE, 1, epoch_start_offset=0, now_ms=0)
    leader.record_fetch(2, 10, leader_end=10, now_ms=100)  # caught up at 100
    leader.record_fetch(3, 10, leader_end=10, now_ms=100)
    leader.record_fetch(3, 10, leader_end=15, now_ms=700)
    leader.record_fetch(3, 15, leader_end=18, now_ms=800)  # reached the end seen at 700
    assert leader.lagging(now_ms=1000, max_lag_ms=500, leader_end=18) == [2]
    # a follower at the leader's end is in sync however long ago it fetched
    assert leader.lagging(now_ms=5000, max_lag_ms=500, leader_end=10) == []


def test_followers_outside_the_isr_rejoin_at_the_high_watermark_and_epoch_start() -> None:
    state = PartitionState("t", 0, 1, 2, 5, (1, 2, 3), (1,))
    leader = LeaderState(state, 1, epoch_start_offset=8, now_ms=0)
    leader.record_fetch(2, 6, leader_end=10, now_ms=1)
    leader.record_fetch(3, 9, leader_end=10, now_ms=1)
    assert leader.catching_up(high_watermark=6) == [3]  # 2 is below this epoch's start


async def test_ack_waiters_wake_in_offset_order() -> None:
    waiters = AckWaiters()
    first, second = waiters.add(5), waiters.add(9)
    waiters.wake(7, 0)
    assert first.done() and first.result() == 0 and not second.done()
    waiters.fail_all(6)
    assert second.result() == 6
    await asyncio.sleep(0)
