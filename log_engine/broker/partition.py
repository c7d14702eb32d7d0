"""A partition as the broker serves it: its log, its high watermark, its waiters.

On a single node (never given a :class:`PartitionState`) the partition is its
own leader and the high watermark is the log end offset. Once the replica
manager applies a state it is *replicated*: as leader it tracks followers
through :class:`LeaderState` and moves the high watermark itself; as follower
it appends the leader's batches with their offsets (:meth:`append_replica`)
and keeps the leader's high watermark (at most its own log end). The
partition also owns the idempotent-producer state and wakes long-polling
fetches when data arrives or the high watermark moves.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass

from log_engine.broker.producer_state import ProducerStateTable, SequenceCheck
from log_engine.broker.replica.leader import NOT_LEADER, LeaderState
from log_engine.errors import (
    ErrorCode,
    InvalidProducerEpochError,
    MalformedRecordError,
    OutOfOrderSequenceNumberError,
)
from log_engine.metadata.types import PartitionState
from log_engine.records import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    iter_batches,
    read_header,
    validate_batch,
)
from log_engine.records.record_check import check_batch_records
from log_engine.storage.partition_log import PartitionLog

_HEADER_SCAN_BYTES = 1 << 30


@dataclass(frozen=True, slots=True)
class AppendOutcome:
    """What a produce response reports for one partition."""

    base_offset: int
    log_append_time_ms: int
    log_start_offset: int
    next_offset: int = -1
    """One past the last offset of the batches (acks=all waits for the HW to reach it)."""


class Partition:
    """One topic partition on this broker: single-node leader, replicated leader or follower."""

    def __init__(self, topic: str, index: int, log: PartitionLog) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.producers = ProducerStateTable()
        self.leader_epoch = 0
        """Stamped on appended batches; the current leader epoch once replicated."""
        self.state: PartitionState | None = None
        """The latest state the replica manager applied (None: single node)."""
        self.leader_state: LeaderState | None = None
        self._hw = 0
        self._waiters: set[asyncio.Future[None]] = set()
        self._rebuild_producer_state()

    @property
    def high_watermark(self) -> int:
        if self.state is None:
            return self.log.log_end_offset
        return self._hw

    @property
    def is_leader(self) -> bool:
        """Whether produce and consumer fetches are served here."""
        return self.state is None or self.leader_state is not None

    @property
    def isr_size(self) -> int:
        return 1 if self.leader_state is None else len(self.leader_state.isr)

    def leader_error(self, current_leader_epoch: int = -1) -> int:
        """0 if requests naming ``current_leader_epoch`` (-1: any) may be served here.

        Else NOT_LEADER_OR_FOLLOWER, or FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH
        when the sender knows an older / newer epoch than this partition.
        """
        if not self.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if current_leader_epoch >= 0 and self.state is not None:
            if current_leader_epoch < self.leader_epoch:
                return ErrorCode.FENCED_LEADER_EPOCH
            if current_leader_epoch > self.leader_epoch:
                return ErrorCode.UNKNOWN_LEADER_EPOCH
        return 0

    # -- role changes (the replica manager calls these) ----------------------------------

    def restore_high_watermark(self, offset: int) -> None:
        """Before the first state: the HW checkpointed before a restart (at most the log end)."""
        if self.state is None:
            self._hw = max(0, min(offset, self.log.log_end_offset))

    def become_leader(self, state: PartitionState, node_id: int, now_ms: int) -> None:
        """Lead from the current log end; the new epoch starts there in the checkpoint."""
        end = self.log.log_end_offset
        self._hw = min(self._hw, end)
        self.log.leader_epochs.assign(state.leader_epoch, end)
        self.leader_epoch = state.leader_epoch
        self.state = state
        previous = self.leader_state
        self.leader_state = LeaderState(state, node_id, end, now_ms)
        if previous is not None:  # re-elected: acks=all requests keep waiting
            self.leader_state.waiters = previous.waiters
        self.maybe_advance_high_watermark()
        self._wake()

    def update_leader(self, state: PartitionState, now_ms: int) -> None:
        """Same leader epoch, new ISR or replicas (an accepted AlterPartition)."""
        assert self.leader_state is not None
        self.state = state
        self.leader_state.update_state(state, now_ms)
        self.maybe_advance_high_watermark()

    def become_follower(self, state: PartitionState) -> None:
        """Stop serving produce; waiting acks=all requests get NOT_LEADER_OR_FOLLOWER."""
        if self.leader_state is not None:
            self.leader_state.waiters.fail_all(NOT_LEADER)
        self.leader_state = None
        self.state = state
        self.leader_epoch = state.leader_epoch
        self._hw = min(self._hw, self.log.log_end_offset)
        self._wake()

    # -- leader side -----------------------------------------------------------------------

    def record_follower_fetch(self, replica_id: int, fetch_offset: int, now_ms: int) -> None:
        """A follower's Fetch tells its log end; the high watermark may move."""
        leader = self.leader_state
        end = self.log.log_end_offset
        if leader is None or not self.log.log_start_offset <= fetch_offset <= end:
            return
        if leader.record_fetch(replica_id, fetch_offset, end, now_ms):
            self.maybe_advance_high_watermark()

    def maybe_advance_high_watermark(self) -> bool:
        """Move the HW to the ISR's smallest log end; wake acks=all waiters and fetches."""
        leader = self.leader_state
        if leader is None:
            return False
        hw = leader.high_watermark(self.log.log_end_offset)
        if hw <= self._hw:
            return False
        self._hw = hw
        code = 0
        if len(leader.isr) < self.log.config.min_insync_replicas:
            code = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        leader.waiters.wake(hw, code)
        self._wake()
        return True

    def wait_replicated(self, next_offset: int) -> asyncio.Future[int]:
        """A future resolved with an error code once the HW reaches ``next_offset``."""
        leader = self.leader_state
        future: asyncio.Future[int]
        if leader is None:
            future = asyncio.get_running_loop().create_future()
            future.set_result(NOT_LEADER)
            return future
        future = leader.waiters.add(next_offset)
        leader.waiters.wake(self._hw, 0)
        return future

    # -- follower side ---------------------------------------------------------------------

    def append_replica(self, data: memoryview | bytes) -> int:
        """Append the leader's batches as they are (offsets, epochs, producer ids); new log end."""
        if not data:
            return self.log.log_end_offset
        self.log.append(data, assign_offsets=False)
        for _, header in iter_batches(data, verify_crc=False):
            self.producers.record(header, header.base_offset, header.max_timestamp)
        return self.log.log_end_offset

    def set_follower_high_watermark(self, leader_high_watermark: int) -> None:
        """Keep the leader's HW, never past this replica's own log end."""
        hw = min(leader_high_watermark, self.log.log_end_offset)
        if hw != self._hw:
            self._hw = hw
            self._wake()

    def truncate_to(self, offset: int) -> None:
        """Drop the log from ``offset`` (a diverged tail) and relearn producer state."""
        if offset >= self.log.log_end_offset:
            return
        self.log.truncate_to(offset)
        self._relearn_after_truncation()

    def restart_at(self, offset: int) -> None:
        """Empty the log and restart it at ``offset`` (the leader's log start is past our end)."""
        self.log.truncate_fully_and_start_at(offset)
        self._relearn_after_truncation()

    def _relearn_after_truncation(self) -> None:
        self._hw = min(self._hw, self.log.log_end_offset)
        self.producers = ProducerStateTable()
        self._rebuild_producer_state()

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    def append(self, data: memoryview | bytes, leader_epoch: int | None = None) -> AppendOutcome:
        """Append a produce request's batches after the idempotence checks.

        Raises the storage layer's errors for invalid batches,
        MalformedRecordError for a batch whose records are not well formed (see
        :mod:`log_engine.records.record_check`: the one per-record pass of the
        produce path) and OutOfOrderSequenceNumberError / InvalidProducerEpochError; appends
        nothing on error.
        """
        batches = list(iter_batches(data, verify_crc=False))
        require_keys = "compact" in self.log.config.cleanup_policy
        for pos, header in batches:
            try:
                check_batch_records(data, pos, header, require_keys=require_keys)
            except MalformedRecordError:
                validate_batch(data, pos)  # a bad CRC is the better answer when there is one
                raise
        headers = [header for _, header in batches]
        for header in headers:
            verdict, original = self.producers.check(header)
            if verdict is SequenceCheck.DUPLICATE and original is not None:
                return AppendOutcome(
                    original.first_offset, -1, self.log_start_offset, original.last_offset + 1
                )
            if verdict is SequenceCheck.OUT_OF_ORDER:
                raise OutOfOrderSequenceNumberError(
                    f"producer {header.producer_id}: sequence {header.base_sequence} "
                    f"out of order on {self.topic}-{self.index}"
                )
            if verdict is SequenceCheck.FENCED_EPOCH:
                raise InvalidProducerEpochError(
                    f"producer {header.producer_id} epoch {header.producer_epoch} is fenced"
                )
        epoch = self.leader_epoch if leader_epoch is None else leader_epoch
        info = self.log.append(data, leader_epoch=epoch)
        offset = info.first_offset
        for header in headers:
            self.producers.record(header, offset, info.max_timestamp)
            offset += header.last_offset_delta + 1
        if self.leader_state is not None:
            self.maybe_advance_high_watermark()
        self._wake()
        return AppendOutcome(
            info.first_offset, info.log_append_time_ms, self.log_start_offset, info.last_offset + 1
        )

    def add_waiter(self, waiter: asyncio.Future[None]) -> None:
        """Resolve ``waiter`` at the next append (long-poll fetch)."""
        self._waiters.add(waiter)

    def remove_waiter(self, waiter: asyncio.Future[None]) -> None:
        self._waiters.discard(waiter)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _rebuild_producer_state(self) -> None:
        """Replay batch headers (never records) to learn producers' last sequences."""
        offset = self.log.log_start_offset
        while offset < self.log.log_end_offset:
            result = self.log.read(offset, _HEADER_SCAN_BYTES)
            if not result.slices:
                return
            for chunk in result.slices:
                for header in _headers_in(chunk.fileno, chunk.position, chunk.size):
                    self.producers.record(header, header.base_offset, header.max_timestamp)
                    offset = header.next_offset


def _headers_in(fileno: int, position: int, size: int) -> Iterator[BatchHeader]:
    end = position + size
    while position + BATCH_HEADER_SIZE <= end:
        header = read_header(os.pread(fileno, BATCH_HEADER_SIZE, position))
        yield header
        position += header.size
