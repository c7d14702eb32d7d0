"""Which consumer groups this broker coordinates, in a cluster: those of the
``__consumer_offsets`` partitions it leads and has loaded (Kafka's model).

The replica manager calls :meth:`GroupOwnership.partition_changed` after each
role change of a partition. For ``__consumer_offsets``:

- **became leader**: the partition is *loading*. Its committed offsets are read
  from the local replica up to the log end the broker had when it took over,
  and kept back until the high watermark reaches that end (so every offset
  served is committed; an acknowledged commit is never missing, since it was
  in the whole ISR and this broker was in it). Then the groups are *owned*.
  Group requests for them meanwhile answer COORDINATOR_LOAD_IN_PROGRESS.
- **stopped leading** (follower, leaderless, or no longer a replica): the
  partition's groups are unloaded: their offsets are forgotten here and their
  members' waiting joins and syncs answer NOT_COORDINATOR, as does every later
  group request for them, so members find the new coordinator.

A single node (no cluster) owns every group: :meth:`error_for` is always 0.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from log_engine.broker.offset_store import OffsetStore, read_offsets
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode

if TYPE_CHECKING:
    from log_engine.broker.group_coordinator import GroupCoordinator
    from log_engine.broker.partition import Partition

log = logging.getLogger(__name__)

_LOAD_RETRY_S = 1.0


class GroupOwnership:
    """The loading and owned ``__consumer_offsets`` partitions of a clustered broker."""

    def __init__(self, offsets: OffsetStore, groups: GroupCoordinator) -> None:
        self._offsets = offsets
        self._groups = groups
        self._leading: dict[int, int] = {}
        """Partition index -> leader epoch it is led (loading or owned) in."""
        self._loads: dict[int, asyncio.Task[None]] = {}

    def error_for(self, group_id: str) -> int:
        """0 if this broker coordinates ``group_id`` now; else the error to answer."""
        if not self._offsets.replicated:
            return ErrorCode.NONE
        index = self._offsets.partition_of(group_id)
        if self._offsets.holds(index):
            return ErrorCode.NONE
        if index in self._leading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return ErrorCode.NOT_COORDINATOR

    async def wait_loaded(self, group_id: str, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for a load of ``group_id``'s partition in progress."""
        load = self._loads.get(self._offsets.partition_of(group_id))
        if load is not None:
            await asyncio.wait({load}, timeout=timeout_s)

    def partition_changed(self, partition: Partition) -> None:
        """After the replica manager applied a state to ``partition``."""
        if partition.topic != OFFSETS_TOPIC or not self._offsets.replicated:
            return  # a single node's local topic: every group is here, loaded at start
        index = partition.index
        if partition.state is not None and partition.leader_state is not None:
            if index not in self._leading:
                self._leading[index] = partition.leader_epoch
                self._loads[index] = asyncio.get_running_loop().create_task(
                    self._load(partition, partition.leader_epoch)
                )
            return
        if index in self._leading:
            self._unload(index)

    async def _load(self, partition: Partition, leader_epoch: int) -> None:
        index = partition.index
        end = partition.log.log_end_offset
        # read in a thread (a big compacted partition takes a while); nothing is appended
        # to it meanwhile: commits wait for the load, and a leader fetches from no one
        loop = asyncio.get_running_loop()
        while True:
            try:
                offsets, records = await loop.run_in_executor(None, read_offsets, partition, end)
                break
            except Exception:
                log.exception("%s-%d: loading failed; trying again", OFFSETS_TOPIC, index)
                await asyncio.sleep(_LOAD_RETRY_S)
        code = await partition.wait_replicated(end)
        still_leading = (
            self._leading.get(index) == leader_epoch and partition.leader_state is not None
        )
        self._loads.pop(index, None)
        if code == ErrorCode.NOT_LEADER_OR_FOLLOWER or not still_leading:
            return
        self._offsets.install(index, offsets)
        log.info(
            "%s-%d: coordinating its %d groups (leader epoch %d, %d offset records up to %d)",
            OFFSETS_TOPIC,
            index,
            sum(1 for g in offsets if offsets[g]),
            leader_epoch,
            records,
            end,
        )

    def _unload(self, index: int) -> None:
        self._leading.pop(index, None)
        load = self._loads.pop(index, None)
        if load is not None:
            load.cancel()
        gone = set(self._offsets.unload(index))
        gone.update(g for g in self._groups.groups if self._offsets.partition_of(g) == index)
        self._groups.unload(gone)
        log.info(
            "%s-%d: no longer its leader; unloaded %d groups", OFFSETS_TOPIC, index, len(gone)
        )

    async def stop(self) -> None:
        """Cancel loads in progress."""
        for task in list(self._loads.values()):
            task.cancel()
        self._loads.clear()
