"""Batches waiting to be sent, per partition, shared by send() callers and the sender.

Callers of ``send()`` (the event loop or connector threads, through the sync
facade) append under one lock; the sender, on the event loop, asks which
brokers have a batch ready (full, lingered long enough, or flushed), drains
at most one batch per partition into each Produce request and puts failed
batches back at the front for a retry.

Memory is bounded by ``buffer.memory``: each new batch reserves
``max(batch.size, record size)`` bytes until it completes; when nothing is
left, :meth:`RecordAccumulator.try_append` answers ``NO_MEMORY`` and the caller
waits (:meth:`wait_for_memory`, or an asyncio event in the async producer).

Ordering: a partition whose batch failed and is waiting for a retry sends only
that batch until it succeeds ("muted"), so retries keep the records' order when
sequence numbers are used; with one in-flight request per connection a
partition is muted whenever it has a batch in flight, as in Kafka. The pieces
of a batch split after the broker refused it as too large take its place at
the head of the queue, the same way.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from log_engine.client.cluster import ClusterMetadata
from log_engine.client.config import ProducerConfig
from log_engine.client.partitioner import StickyPartitioner
from log_engine.client.producer_batch import ProducerBatch, encoded_size
from log_engine.client.types import Header, TopicPartition


class AppendResult(IntEnum):
    """What :meth:`RecordAccumulator.try_append` did."""

    APPENDED = 0  # into an open batch
    NEW_BATCH = 1  # a batch was started: the sender should look again
    NO_MEMORY = 2  # buffer.memory is used up: wait and try again


class RecordAccumulator:
    """Per-partition deques of :class:`ProducerBatch`, bounded by ``buffer.memory``."""

    def __init__(self, config: ProducerConfig, partitioner: StickyPartitioner) -> None:
        self._lock = threading.Lock()
        self._memory_freed = threading.Condition(self._lock)
        self._batches: dict[str, dict[int, deque[ProducerBatch]]] = {}
        self._sticky_batches: dict[str, ProducerBatch] = {}  # open batch of unkeyed records
        self._partitioner = partitioner
        self._batch_size = config.batch_size
        self._linger_s = config.linger_ms / 1000
        self._free_bytes = config.buffer_memory
        self._mute_in_flight = config.max_in_flight_requests_per_connection == 1
        self._in_flight: dict[TopicPartition, int] = {}
        self._retrying: set[TopicPartition] = set()
        self._drain_rotation = 0
        self.incomplete: set[ProducerBatch] = set()
        self.memory_waiters = 0
        self.flushing = 0
        self.closing = False

    # -- caller side ---------------------------------------------------------------------

    def try_append(
        self,
        topic: str,
        partition: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header] | None,
        timestamp: int,
        future: Any,
        size_hint: int,
        num_partitions: int,
        available: list[int],
    ) -> tuple[AppendResult, Any]:
        """Append a record to its partition's open batch, or start a batch.

        ``partition`` None means sticky partitioning (no key): a record that
        would start a new batch moves the topic to another partition first.
        ``future`` None makes the batch create a thread-safe future. Returns
        what happened and the record's future (None with ``NO_MEMORY``).
        """
        with self._lock:
            if partition is None:
                sticky = self._sticky_batches.get(topic)
                if sticky is not None and sticky.has_room(size_hint):  # the hot path
                    return AppendResult.APPENDED, sticky.append(
                        key, value, headers, timestamp, future
                    )
            parts = self._batches.get(topic)
            if parts is None:
                parts = self._batches[topic] = {}
            if partition is not None:
                dq = parts.get(partition)
                if dq and dq[-1].has_room(size_hint):
                    return AppendResult.APPENDED, dq[-1].append(
                        key, value, headers, timestamp, future
                    )
                return self._start_batch(
                    topic, partition, parts, size_hint, (key, value, headers, timestamp, future)
                )
            # Sticky: a record that would start a batch moves the topic on first (KIP-480).
            current = self._partitioner.partition(topic, num_partitions, available)
            self._partitioner.on_batch_closed(topic, current, num_partitions, available)
            partition = self._partitioner.partition(topic, num_partitions, available)
            dq = parts.get(partition)
            if dq and dq[-1].has_room(size_hint):
                self._sticky_batches[topic] = dq[-1]
                return AppendResult.APPENDED, dq[-1].append(key, value, headers, timestamp, future)
            result = self._start_batch(
                topic, partition, parts, size_hint, (key, value, headers, timestamp, future)
            )
            if result[0] is AppendResult.NEW_BATCH:
                self._sticky_batches[topic] = parts[partition][-1]
            return result

    def try_append_run(
        self,
        topic: str,
        partition: int | None,
        keys: Sequence[bytes | None] | None,
        values: Sequence[bytes | None],
        headers: Sequence[Sequence[Header] | None] | None,
        timestamps: Sequence[int] | None,
        timestamp: int,
        start: int,
        stop: int,
        num_partitions: int,
        available: list[int],
    ) -> tuple[AppendResult, int, list[tuple[int, int, Any]]]:
        """Append records ``start``..``stop - 1``, all to ``partition`` (None: sticky).

        :meth:`try_append` for many records, one lock round per batch: they fill the
        open batch, then new ones. Returns ``NEW_BATCH`` if a batch was started (``APPENDED``
        otherwise) or ``NO_MEMORY`` when ``buffer.memory`` ran out first, the index of
        the first record not appended, and ``(start, stop, future)`` per batch used.
        """
        segments: list[tuple[int, int, Any]] = []
        started = False
        index = start
        full = False  # the open batch refused the next record
        while index < stop:
            with self._lock:  # one batch per lock round: the sender never waits for a long run
                parts = self._batches.get(topic)
                if parts is None:
                    parts = self._batches[topic] = {}
                batch = None if full else self._open_batch(topic, partition, parts)
                if batch is None:
                    key = None if keys is None else keys[index]
                    hdrs = None if headers is None else headers[index]
                    stamp = timestamp if timestamps is None else timestamps[index]
                    size_hint = encoded_size(key, values[index], hdrs)
                    batch = self._new_batch(
                        topic, partition, parts, size_hint, stamp, num_partitions, available
                    )
                    if batch is None:
                        return AppendResult.NO_MEMORY, index, segments
                    started = True
                end, future = batch.append_run(
                    keys, values, headers, timestamps, timestamp, index, stop
                )
            if future is not None:
                segments.append((index, end, future))
            full = end < stop
            index = end
        return (AppendResult.NEW_BATCH if started else AppendResult.APPENDED), index, segments

    def _open_batch(
        self, topic: str, partition: int | None, parts: dict[int, deque[ProducerBatch]]
    ) -> ProducerBatch | None:
        """The batch records for ``partition`` (None: sticky) go to now, if one is open."""
        if partition is None:
            batch = self._sticky_batches.get(topic)
        else:
            dq = parts.get(partition)
            batch = dq[-1] if dq else None
        if batch is None or batch.closed:
            return None
        return batch

    def _new_batch(
        self,
        topic: str,
        partition: int | None,
        parts: dict[int, deque[ProducerBatch]],
        size_hint: int,
        timestamp: int,
        num_partitions: int,
        available: list[int],
    ) -> ProducerBatch | None:
        """Start a batch for ``partition`` (None: move the sticky partition on); lock held."""
        reserve = max(self._batch_size, size_hint)
        if reserve > self._free_bytes:
            return None
        sticky = partition is None
        if partition is None:
            current = self._partitioner.partition(topic, num_partitions, available)
            self._partitioner.on_batch_closed(topic, current, num_partitions, available)
            partition = self._partitioner.partition(topic, num_partitions, available)
        self._free_bytes -= reserve
        tp = TopicPartition(topic, partition)
        batch = ProducerBatch(tp, timestamp, self._batch_size, reserve)
        dq = parts.get(partition)
        if dq is None:
            dq = parts[partition] = deque()
        dq.append(batch)
        self.incomplete.add(batch)
        if sticky:
            self._sticky_batches[topic] = batch
        return batch

    def _start_batch(
        self,
        topic: str,
        partition: int,
        parts: dict[int, deque[ProducerBatch]],
        size_hint: int,
        record: tuple[bytes | None, bytes | None, Sequence[Header] | None, int, Any],
    ) -> tuple[AppendResult, Any]:
        """Open a batch for ``record`` if ``buffer.memory`` allows (lock held)."""
        reserve = max(self._batch_size, size_hint)
        if reserve > self._free_bytes:
            return AppendResult.NO_MEMORY, None
        self._free_bytes -= reserve
        batch = ProducerBatch(
            TopicPartition(topic, partition), record[3], self._batch_size, reserve
        )
        future = batch.append(*record)
        dq = parts.get(partition)
        if dq is None:
            dq = parts[partition] = deque()
        dq.append(batch)
        self.incomplete.add(batch)
        return AppendResult.NEW_BATCH, future

    def wait_for_memory(self, timeout_s: float) -> bool:
        """Block the calling thread until a batch frees memory or ``timeout_s`` passes."""
        with self._memory_freed:
            self.memory_waiters += 1
            try:
                return self._memory_freed.wait(timeout_s)
            finally:
                self.memory_waiters -= 1

    def snapshot_incomplete(self) -> list[ProducerBatch]:
        """The batches not yet completed or failed, for flush() to wait on."""
        with self._lock:
            return list(self.incomplete)

    def change_flushing(self, delta: int) -> None:
        """Count a flush() starting (+1) or ending (-1): while any runs, nothing lingers."""
        with self._lock:
            self.flushing += delta

    def change_memory_waiters(self, delta: int) -> None:
        """Count a caller waiting for buffer memory: while any waits, nothing lingers."""
        with self._lock:
            self.memory_waiters += delta

    # -- sender side ---------------------------------------------------------------------

    def ready(self, metadata: ClusterMetadata, now: float) -> tuple[set[int], float, bool]:
        """Nodes with a sendable batch, seconds until the next one may be, unknown leaders."""
        nodes: set[int] = set()
        next_s = self._linger_s if self._linger_s > 0 else 0.05
        unknown_leader = False
        urgent = self.flushing > 0 or self.closing or self.memory_waiters > 0
        with self._lock:
            for parts in self._batches.values():
                for dq in parts.values():
                    if not dq:
                        continue
                    head = dq[0]
                    leader = metadata.leader(head.tp)
                    if leader < 0:
                        unknown_leader = True
                        continue
                    if leader in nodes or self._muted(head.tp):
                        continue
                    if head.attempts and head.retry_at_monotonic > now:
                        next_s = min(next_s, head.retry_at_monotonic - now)
                        continue
                    waited = now - head.created_monotonic
                    if (
                        urgent
                        or len(dq) > 1
                        or waited >= self._linger_s
                        or head.attempts
                        or (head.size_bytes >= self._batch_size)
                    ):
                        nodes.add(leader)
                    else:
                        next_s = min(next_s, self._linger_s - waited)
        return nodes, max(next_s, 0.0), unknown_leader

    def drain(
        self, metadata: ClusterMetadata, node: int, max_bytes: int, now: float
    ) -> list[ProducerBatch]:
        """Take the head batch of each sendable partition led by ``node``, within ``max_bytes``."""
        out: list[ProducerBatch] = []
        total = 0
        with self._lock:
            candidates = [
                dq
                for parts in self._batches.values()
                for dq in parts.values()
                if dq and metadata.leader(dq[0].tp) == node
            ]
            if not candidates:
                return out
            self._drain_rotation = (self._drain_rotation + 1) % len(candidates)
            ordered = candidates[self._drain_rotation :] + candidates[: self._drain_rotation]
            for dq in ordered:
                head = dq[0]
                if self._muted(head.tp) or (head.attempts and head.retry_at_monotonic > now):
                    continue
                if out and total + head.size_bytes > max_bytes:
                    break
                dq.popleft()
                total += head.size_bytes
                head.in_flight = True
                head.closed = True
                self._in_flight[head.tp] = self._in_flight.get(head.tp, 0) + 1
                out.append(head)
        return out

    def reenqueue(self, batch: ProducerBatch, backoff_s: float) -> None:
        """Put a failed batch back for a retry, ahead of later batches of its partition."""
        with self._lock:
            self._finish_flight(batch)
            batch.attempts += 1
            batch.retry_at_monotonic = time.monotonic() + backoff_s
            dq = self._batches.setdefault(batch.tp.topic, {}).setdefault(
                batch.tp.partition, deque()
            )
            index = 0
            if batch.base_sequence >= 0:
                while index < len(dq) and 0 <= dq[index].base_sequence < batch.base_sequence:
                    index += 1
                self._retrying.add(batch.tp)
            dq.insert(index, batch)

    def split_and_reenqueue(self, batch: ProducerBatch, pieces: list[ProducerBatch]) -> None:
        """Queue the pieces of a batch refused as too large where the batch was, in order.

        A split batch (no parent) stays incomplete, holding its memory, until its pieces
        resolve it; a piece split again is replaced by its own pieces.
        """
        with self._lock:
            self._finish_flight(batch)
            if batch.parent is not None:
                self.incomplete.discard(batch)
            self.incomplete.update(pieces)
            dq = self._batches.setdefault(batch.tp.topic, {}).setdefault(
                batch.tp.partition, deque()
            )
            first = pieces[0]
            index = 0
            if first.base_sequence >= 0:
                while index < len(dq) and 0 <= dq[index].base_sequence < first.base_sequence:
                    index += 1
                self._retrying.add(batch.tp)
            else:  # no sequences: behind older batches (retries), ahead of newer ones
                while index < len(dq) and dq[index].created_monotonic < first.created_monotonic:
                    index += 1
            for offset, piece in enumerate(pieces):
                dq.insert(index + offset, piece)

    def sequenced_after(self, failed: ProducerBatch) -> list[ProducerBatch]:
        """Unfinished batches of ``failed``'s partition stamped after it (same producer id).

        The sender renumbers them when ``failed`` is dropped for good; while any of them is
        in flight the partition is muted, so the broker's out-of-order answers to those
        are retried once the renumbered batches are queued in order.
        """
        with self._lock:
            later = [
                batch
                for batch in self.incomplete
                if batch.tp == failed.tp
                and batch.split_state is None
                and batch.sealed
                and batch.producer_id == failed.producer_id
                and batch.producer_epoch == failed.producer_epoch
                and batch.base_sequence > failed.base_sequence
            ]
            if self._in_flight.get(failed.tp):
                self._retrying.add(failed.tp)
        return later

    def finished(self, batch: ProducerBatch) -> None:
        """A batch completed or failed: free its memory and wake blocked callers."""
        with self._lock:
            if batch.in_flight:
                self._finish_flight(batch)
            self.incomplete.discard(batch)
            self._free_bytes += batch.reserved_bytes
            batch.reserved_bytes = 0
            self._memory_freed.notify_all()
            if batch.tp in self._retrying:
                dq = self._batches.get(batch.tp.topic, {}).get(batch.tp.partition)
                if not self._in_flight.get(batch.tp) and not (dq and dq[0].base_sequence >= 0):
                    self._retrying.discard(batch.tp)

    def expire(self, now: float, delivery_timeout_s: float) -> list[ProducerBatch]:
        """Remove and return queued batches older than ``delivery.timeout.ms``."""
        expired: list[ProducerBatch] = []
        with self._lock:
            for parts in self._batches.values():
                for dq in parts.values():
                    while dq and now - dq[0].created_monotonic >= delivery_timeout_s:
                        expired.append(dq.popleft())
                        expired[-1].closed = True
        return expired

    def drop_all(self) -> list[ProducerBatch]:
        """Remove and return every queued batch (closing without waiting)."""
        with self._lock:
            out = [b for parts in self._batches.values() for dq in parts.values() for b in dq]
            for batch in out:
                batch.closed = True
            self._batches.clear()
            self._sticky_batches.clear()
        return out

    def has_queued(self) -> bool:
        """Whether any batch waits in a deque (not counting batches in flight)."""
        with self._lock:
            return any(dq for parts in self._batches.values() for dq in parts.values())

    def forget_retries(self) -> None:
        """After a producer id reset: batches get new sequences, so stop muting partitions."""
        with self._lock:
            self._retrying.clear()

    def has_earlier_unresolved(self, batch: ProducerBatch) -> bool:
        """Whether a batch stamped before ``batch`` (same partition and producer) is unresolved.

        Still in flight or queued for a retry: the broker has not written it yet, so
        it answers OUT_OF_ORDER_SEQUENCE_NUMBER to ``batch``, which must then wait
        and retry behind it rather than give up its sequence (Kafka's rule too).
        """
        if batch.base_sequence < 0:
            return False
        with self._lock:
            return any(
                other is not batch
                and other.tp == batch.tp
                and other.split_state is None
                and other.producer_id == batch.producer_id
                and other.producer_epoch == batch.producer_epoch
                and 0 <= other.base_sequence < batch.base_sequence
                for other in self.incomplete
            )

    def is_retrying(self, tp: TopicPartition) -> bool:
        """Whether ``tp`` is muted behind a batch waiting for its retry."""
        return tp in self._retrying

    # -- internals -----------------------------------------------------------------------

    def _muted(self, tp: TopicPartition) -> bool:
        if tp in self._retrying or self._mute_in_flight:
            return self._in_flight.get(tp, 0) > 0
        return False

    def _finish_flight(self, batch: ProducerBatch) -> None:
        batch.in_flight = False
        left = self._in_flight.get(batch.tp, 0) - 1
        if left > 0:
            self._in_flight[batch.tp] = left
        else:
            self._in_flight.pop(batch.tp, None)
