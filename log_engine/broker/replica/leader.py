"""The leader's view of one partition: followers' progress, the ISR and the high watermark.

Kafka's rules (``Partition.scala``), kept small:

* A follower's log end offset is the ``fetch_offset`` of its latest Fetch
  (replica id >= 0): it asks for what it does not have yet.
* A follower is *caught up* at a fetch whose offset reaches the leader's log
  end; a fetch reaching the leader's log end *at the follower's previous
  fetch* proves it was caught up then. ``replica.lag.time.max.ms`` without
  being caught up takes it out of the ISR.
* A follower outside the ISR whose log end reaches the high watermark (and
  the start of the leader's epoch) goes back in.
* The high watermark is the smallest log end offset among the ISR (the
  leader's own included) and never moves back while this broker leads. ISR
  changes go through the controller; while one is pending the high watermark
  uses the larger of the old and new ISR ("maximal ISR") so it never
  advances on a set the controller has not accepted.

acks=all produce requests wait here too (:class:`AckWaiters`): each is keyed
by the offset the high watermark must reach and woken when it does.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from log_engine.errors import ErrorCode
from log_engine.metadata.types import PartitionState

UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class FollowerProgress:
    """What the leader knows of one follower since it became leader."""

    log_end_offset: int
    last_caught_up_ms: int
    last_fetch_ms: int
    leader_end_at_last_fetch: int


class AckWaiters:
    """acks=all produce requests waiting for the high watermark, oldest offset first."""

    def __init__(self) -> None:
        self._waiting: deque[tuple[int, asyncio.Future[int]]] = deque()

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, required_offset: int) -> asyncio.Future[int]:
        """A future resolved with an error code (0 when replicated) once HW >= offset."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append((required_offset, future))
        return future

    def wake(self, high_watermark: int, code: int) -> None:
        """Resolve every waiter the high watermark covers (appends come in offset order)."""
        while self._waiting and self._waiting[0][0] <= high_watermark:
            _, future = self._waiting.popleft()
            if not future.done():
                future.set_result(code)

    def fail_all(self, code: int) -> None:
        """Answer every waiter with ``code`` (leadership moved away)."""
        waiting, self._waiting = self._waiting, deque()
        for _, future in waiting:
            if not future.done():
                future.set_result(code)


class LeaderState:
    """Per-partition state of a leader; the owning :class:`Partition` supplies its log end."""

    def __init__(self, state: PartitionState, node_id: int, epoch_start_offset: int, now_ms: int):
        self.state = state
        self.node_id = node_id
        self.epoch_start_offset = epoch_start_offset
        self.pending_isr: tuple[int, ...] | None = None
        """The ISR asked of the controller and not answered yet."""
        self.followers = {
            replica: FollowerProgress(UNKNOWN_OFFSET, now_ms, now_ms, UNKNOWN_OFFSET)
            for replica in state.replicas
            if replica != node_id
        }
        self.waiters = AckWaiters()

    @property
    def isr(self) -> tuple[int, ...]:
        return self.state.isr

    @property
    def leader_epoch(self) -> int:
        return self.state.leader_epoch

    def update_state(self, state: PartitionState, now_ms: int) -> None:
        """The controller accepted a change in this leader epoch (ISR, replicas)."""
        self.state = state
        self.pending_isr = None
        for replica in state.replicas:
            if replica != self.node_id and replica not in self.followers:
                self.followers[replica] = FollowerProgress(
                    UNKNOWN_OFFSET, now_ms, now_ms, UNKNOWN_OFFSET
                )

    def record_fetch(
        self, replica_id: int, fetch_offset: int, leader_end: int, now_ms: int
    ) -> bool:
        """Note a follower's Fetch; True if it is a known replica of this partition."""
        progress = self.followers.get(replica_id)
        if progress is None:
            return False
        if fetch_offset >= leader_end:
            progress.last_caught_up_ms = now_ms
        elif fetch_offset >= progress.leader_end_at_last_fetch >= 0:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, progress.last_fetch_ms)
        progress.log_end_offset = fetch_offset
        progress.last_fetch_ms = now_ms
        progress.leader_end_at_last_fetch = leader_end
        return True

    def high_watermark(self, leader_end: int) -> int:
        """The smallest log end offset of the (maximal) ISR."""
        members = set(self.isr) | set(self.pending_isr or ())
        low = leader_end
        for replica in members:
            if replica == self.node_id:
                continue
            progress = self.followers.get(replica)
            low = min(low, progress.log_end_offset if progress else UNKNOWN_OFFSET)
        return low

    def lagging(self, now_ms: int, max_lag_ms: int, leader_end: int) -> list[int]:
        """ISR followers not caught up within ``max_lag_ms``."""
        out = []
        for replica in self.isr:
            progress = self.followers.get(replica)
            if replica == self.node_id or progress is None:
                continue
            if progress.log_end_offset >= leader_end:
                progress.last_caught_up_ms = now_ms
            elif now_ms - progress.last_caught_up_ms > max_lag_ms:
                out.append(replica)
        return out

    def catching_up(self, high_watermark: int) -> list[int]:
        """Followers outside the ISR whose log end reached the HW and this epoch's start."""
        return [
            replica
            for replica, progress in self.followers.items()
            if replica not in self.isr
            and replica in self.state.replicas
            and progress.log_end_offset >= max(high_watermark, self.epoch_start_offset)
        ]


NOT_LEADER = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
