"""A partition as the broker serves it: its log, its high watermark, its waiters.

On a single node the high watermark is the log end offset (the ISR is just the
leader); replication will move it separately. The partition also owns the
idempotent-producer state and wakes long-polling fetches when data arrives.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass

from log_engine.broker.producer_state import ProducerStateTable, SequenceCheck
from log_engine.errors import (
    InvalidProducerEpochError,
    MalformedRecordError,
    OutOfOrderSequenceNumberError,
)
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


class Partition:
    """One topic partition led by this broker."""

    def __init__(self, topic: str, index: int, log: PartitionLog) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.producers = ProducerStateTable()
        self._waiters: set[asyncio.Future[None]] = set()
        self._rebuild_producer_state()

    @property
    def high_watermark(self) -> int:
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    def append(self, data: memoryview | bytes, leader_epoch: int = 0) -> AppendOutcome:
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
                return AppendOutcome(original.first_offset, -1, self.log_start_offset)
            if verdict is SequenceCheck.OUT_OF_ORDER:
                raise OutOfOrderSequenceNumberError(
                    f"producer {header.producer_id}: sequence {header.base_sequence} "
                    f"out of order on {self.topic}-{self.index}"
                )
            if verdict is SequenceCheck.FENCED_EPOCH:
                raise InvalidProducerEpochError(
                    f"producer {header.producer_id} epoch {header.producer_epoch} is fenced"
                )
        info = self.log.append(data, leader_epoch=leader_epoch)
        offset = info.first_offset
        for header in headers:
            self.producers.record(header, offset, info.max_timestamp)
            offset += header.last_offset_delta + 1
        self._wake()
        return AppendOutcome(info.first_offset, info.log_append_time_ms, self.log_start_offset)

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
