"""Loading and unloading a replicated ``__consumer_offsets`` partition, and commits that
wait for its high watermark (log_engine.broker.group_ownership, offset_store).

Real partition logs in a temporary dir; the follower is played by calling the
leader's ``record_follower_fetch`` as a follower's Fetch would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from log_engine.broker.group_coordinator import GroupCoordinator, JoinRequest
from log_engine.broker.group_ownership import GroupOwnership
from log_engine.broker.offset_store import CommittedOffset, OffsetStore
from log_engine.broker.partition import Partition
from log_engine.broker.topics import OFFSETS_TOPIC, TopicManager
from log_engine.errors import ErrorCode
from log_engine.metadata.types import PartitionState
from log_engine.storage.config import LogConfig
from log_engine.storage.log_manager import LogManager

LEADER, FOLLOWER = 1, 2


@pytest.fixture
def topics(tmp_path: Path) -> Iterator[TopicManager]:
    logs = LogManager.open(tmp_path, LogConfig.from_properties({}))
    try:
        yield TopicManager(logs)
    finally:
        logs.close()


def _state(leader: int, epoch: int, isr: tuple[int, ...] = (LEADER, FOLLOWER)) -> PartitionState:
    return PartitionState(OFFSETS_TOPIC, 0, leader, epoch, epoch, (LEADER, FOLLOWER), isr)


def _offset(offset: int) -> dict[tuple[str, int], CommittedOffset]:
    return {("orders", 0): CommittedOffset(offset, -1, "", 0)}


async def _until(check: Callable[[], bool]) -> None:
    """Let the load task (a read in a thread, then the HW wait) run until ``check``."""
    async with asyncio.timeout(30):  # a bound against hanging, not a speed check
        while not check():
            await asyncio.sleep(0.01)


async def _turns() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_new_leader_serves_its_groups_once_the_hw_covers_its_log(
    topics: TopicManager,
) -> None:
    # what an earlier leader wrote: one commit of offset 5 (appended as a single node)
    local = OffsetStore.local(topics, 1, 1 << 20)
    assert await local.commit("g", _offset(5)) == 0
    partition = topics.partition(OFFSETS_TOPIC, 0)
    assert isinstance(partition, Partition)

    store = OffsetStore.replicated_store(topics, lambda: 1, commit_timeout_ms=2000)
    groups = GroupCoordinator(
        initial_rebalance_delay_ms=0, min_session_timeout_ms=1, max_session_timeout_ms=60_000
    )
    ownership = GroupOwnership(store, groups)
    assert ownership.error_for("g") == ErrorCode.NOT_COORDINATOR

    partition.become_leader(_state(LEADER, 1), LEADER, now_ms=0)
    ownership.partition_changed(partition)
    # its follower has not confirmed the log yet: the offset may not be committed
    assert ownership.error_for("g") == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert await store.commit("g", _offset(7)) == ErrorCode.NOT_COORDINATOR

    partition.record_follower_fetch(FOLLOWER, partition.log.log_end_offset, now_ms=1)
    await _until(lambda: ownership.error_for("g") == 0)
    assert store.fetch("g") == _offset(5)

    # a commit is answered once the follower has it (acks=all)
    commit = asyncio.ensure_future(store.commit("g", _offset(9)))
    await _turns()
    assert not commit.done()
    partition.record_follower_fetch(FOLLOWER, partition.log.log_end_offset, now_ms=2)
    assert await commit == 0
    assert store.fetch("g") == _offset(9)


async def test_below_min_insync_replicas_a_commit_appends_nothing(topics: TopicManager) -> None:
    topics.logs.set_topic_overrides(OFFSETS_TOPIC, {"min.insync.replicas": "2"})
    partition = topics.ensure_partition(OFFSETS_TOPIC, 0)
    partition.log.update_config(topics.logs.topic_config(OFFSETS_TOPIC))
    store = OffsetStore.replicated_store(topics, lambda: 1, commit_timeout_ms=2000)
    groups = GroupCoordinator(
        initial_rebalance_delay_ms=0, min_session_timeout_ms=1, max_session_timeout_ms=60_000
    )
    ownership = GroupOwnership(store, groups)
    partition.become_leader(_state(LEADER, 1, isr=(LEADER,)), LEADER, now_ms=0)
    ownership.partition_changed(partition)
    await _until(lambda: ownership.error_for("g") == 0)
    end = partition.log.log_end_offset
    assert await store.commit("g", _offset(3)) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert partition.log.log_end_offset == end
    assert store.fetch("g") == {}


async def test_losing_the_leadership_unloads_the_groups_and_their_waiting_members(
    topics: TopicManager,
) -> None:
    partition = topics.ensure_partition(OFFSETS_TOPIC, 0)
    store = OffsetStore.replicated_store(topics, lambda: 1, commit_timeout_ms=2000)
    groups = GroupCoordinator(
        initial_rebalance_delay_ms=60_000, min_session_timeout_ms=1, max_session_timeout_ms=60_000
    )
    ownership = GroupOwnership(store, groups)
    partition.become_leader(_state(LEADER, 1, isr=(LEADER,)), LEADER, now_ms=0)
    ownership.partition_changed(partition)
    await _until(lambda: ownership.error_for("g") == 0)
    assert await store.commit("g", _offset(4)) == 0
    join = asyncio.ensure_future(
        groups.join(
            JoinRequest("g", "", None, "c", "/h", 10_000, 10_000, "consumer", [("r", b"")], False)
        )
    )
    await _turns()
    assert not join.done()  # waiting out the initial rebalance delay

    partition.become_follower(_state(FOLLOWER, 2))
    ownership.partition_changed(partition)
    assert (await join).error_code == ErrorCode.NOT_COORDINATOR
    assert ownership.error_for("g") == ErrorCode.NOT_COORDINATOR
    assert store.fetch("g") == {} and "g" not in groups.groups

    # leader again later: the offsets come back from the log
    partition.become_leader(_state(LEADER, 3, isr=(LEADER,)), LEADER, now_ms=1)
    ownership.partition_changed(partition)
    await _until(lambda: store.fetch("g") == _offset(4))
