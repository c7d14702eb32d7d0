"""The producer: ``send()`` records, get futures of where they landed.

:class:`Producer` is the asyncio client; :class:`SyncProducer` wraps it for
plain threads. Both append records straight into per-partition batches (the
accumulator is thread-safe, so a connector thread does not hop to the event
loop per record) and a sender task on the loop ships them; see
:mod:`log_engine.client.accumulator` and :mod:`log_engine.client.sender`.

``SyncProducer.send_many`` queues a list of records of one topic in one call,
with one future per run of records sharing a batch instead of one per record
(the connect runtime's source path: a poll's records at once).

Keys pick partitions with Kafka's murmur2 partitioner; records without a key
stick to one partition per batch. ``buffer.memory`` bounds what waits in
memory: ``send()`` waits up to ``max.block.ms`` for room, then fails.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from log_engine.client import errors
from log_engine.client.accumulator import AppendResult, RecordAccumulator
from log_engine.client.cluster import Cluster, ClusterMetadata
from log_engine.client.config import ProducerConfig
from log_engine.client.loop_thread import LoopThread
from log_engine.client.partitioner import StickyPartitioner, partition_for_key
from log_engine.client.producer_batch import RECORD_OVERHEAD_MAX, encoded_size
from log_engine.client.sender import Sender
from log_engine.client.types import Header, RecordMetadata
from log_engine.protocol.error_codes import ErrorCode


class Segment(NamedTuple):
    """Records ``start``..``stop - 1`` of a ``send_many`` call, delivered together.

    ``future`` resolves to their ``RecordMetadata`` list once the broker has them, or
    fails with the batch's error (all of them failed).
    """

    start: int
    stop: int
    future: concurrent.futures.Future[list[RecordMetadata]]


@dataclass(frozen=True, slots=True)
class SendManyResult:
    """What ``SyncProducer.send_many`` appended: records ``0..sent - 1``, in ``segments``.

    ``error`` says why it stopped before the end (None when every record was
    appended): records from ``sent`` on were not sent and can be sent again.
    Segments are in record order; a record's partition is its segment's batch's.
    """

    sent: int
    segments: list[Segment]
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _Route:
    """A topic's partition count and the partitions with a leader, for one metadata version."""

    metadata: ClusterMetadata
    num_partitions: int
    available: list[int]


class Producer:
    """Asynchronous Kafka producer (``bootstrap.servers``, ``acks``, ``linger.ms``, ...).

    ``await send(...)`` returns as soon as the record is in a batch (waiting
    only for metadata or buffer space); the returned future resolves to a
    :class:`RecordMetadata` when the broker acknowledged it. Use as
    ``async with Producer(config) as producer:`` or call :meth:`close`.
    """

    def __init__(
        self, config: ProducerConfig | Mapping[str, Any] | None = None, **overrides: Any
    ) -> None:
        self.config = (
            config
            if isinstance(config, ProducerConfig)
            else ProducerConfig.from_mapping(config, **overrides)
        )
        self._cluster = Cluster(self.config, allow_auto_create_topics=True)
        self._acc = RecordAccumulator(self.config, StickyPartitioner())
        self._sender = Sender(self.config, self._cluster, self._acc, self._on_batch_done)
        self._routes: dict[str, _Route] = {}
        self._batch_done = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sender_task: asyncio.Task[None] | None = None
        self._start_lock = asyncio.Lock()
        self._closed = False
        self._max_block_s = self.config.max_block_ms / 1000
        self._record_bytes_max = min(self.config.max_request_size, self.config.buffer_memory)

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect to the cluster and start the sender (``send`` does this on first use)."""
        async with self._start_lock:
            if self._sender_task is not None:
                return
            self._check_open()
            self._loop = asyncio.get_running_loop()
            await self._cluster.bootstrap()
            self._sender_task = self._loop.create_task(self._sender.run())

    async def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> asyncio.Future[RecordMetadata]:
        """Queue one record; the future resolves once the broker has it (or fails)."""
        if self._sender_task is None:
            await self.start()
        self._check_open()
        assert self._loop is not None
        route = self._routes.get(topic)
        if route is None or route.metadata is not self._cluster.metadata:
            route = await self._route(topic)
        future: asyncio.Future[RecordMetadata] = self._loop.create_future()
        chosen, size, timestamp = self._prepare(
            topic, route, value, key, headers, partition, timestamp_ms
        )
        deadline = 0.0
        while True:
            result, _ = self._acc.try_append(
                topic,
                chosen,
                key,
                value,
                headers,
                timestamp,
                future,
                size,
                route.num_partitions,
                route.available,
            )
            if result is not AppendResult.NO_MEMORY:
                if result is AppendResult.NEW_BATCH:
                    self._sender.wakeup()
                return future
            deadline = deadline or time.monotonic() + self._max_block_s
            await self._wait_for_memory(deadline)

    async def flush(self, timeout_ms: int | None = None) -> None:
        """Send everything queued now and wait until each record succeeded or failed."""
        pending = self._acc.snapshot_incomplete()
        if not pending:
            return
        self._acc.change_flushing(+1)
        self._sender.wakeup()
        try:
            async with asyncio.timeout(None if timeout_ms is None else timeout_ms / 1000):
                for batch in pending:
                    while not batch.done:
                        self._batch_done.clear()
                        await self._batch_done.wait()
        except TimeoutError:
            raise errors.timeout_error(f"flush did not complete within {timeout_ms} ms") from None
        finally:
            self._acc.change_flushing(-1)

    async def close(self, timeout_ms: int | None = None) -> None:
        """Send what is queued (up to ``timeout_ms``), fail the rest, close connections."""
        if self._closed:
            return
        self._closed = True
        if self._sender_task is not None:
            self._sender.begin_close()
            try:
                async with asyncio.timeout(None if timeout_ms is None else timeout_ms / 1000):
                    await asyncio.shield(self._sender_task)
            except TimeoutError:
                self._sender.fail_all(errors.ClientClosedError("producer closed before delivery"))
                self._sender_task.cancel()
                await asyncio.gather(self._sender_task, return_exceptions=True)
        await self._cluster.close()

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of ``topic`` (waiting for its metadata up to ``max.block.ms``)."""
        if self._sender_task is None:
            await self.start()
        info = await self._cluster.wait_for_topic(topic, self.config.max_block_ms)
        return sorted(info.partitions)

    # -- shared with SyncProducer ----------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise errors.ClientClosedError("the producer is closed")
        if self._sender.fatal_error is not None:
            raise self._sender.fatal_error

    async def _route(self, topic: str) -> _Route:
        info = self._cluster.metadata.topics.get(topic)
        if info is None or info.error_code or not info.partitions:
            info = await self._cluster.wait_for_topic(topic, self.config.max_block_ms)
        metadata = self._cluster.metadata
        route = _Route(
            metadata,
            len(info.partitions),
            sorted(p for p, part in info.partitions.items() if part.leader >= 0),
        )
        self._routes[topic] = route
        return route

    def _current_route(self, topic: str) -> _Route | None:
        route = self._routes.get(topic)
        if route is not None and route.metadata is self._cluster.metadata:
            return route
        info = self._cluster.metadata.topics.get(topic)
        if info is None or info.error_code or not info.partitions:
            return None
        route = _Route(
            self._cluster.metadata,
            len(info.partitions),
            sorted(p for p, part in info.partitions.items() if part.leader >= 0),
        )
        self._routes[topic] = route
        return route

    def _prepare(
        self,
        topic: str,
        route: _Route,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[Header] | None,
        partition: int | None,
        timestamp_ms: int | None,
    ) -> tuple[int | None, int, int]:
        """Partition (None: sticky), size bound and timestamp of a record; checks limits."""
        if headers or value is None:
            size = encoded_size(key, value, headers)
        else:
            size = RECORD_OVERHEAD_MAX + len(value) + (len(key) if key else 0)
        if size > self._record_bytes_max:
            raise errors.kafka_error(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"a record of about {size} bytes exceeds max.request.size "
                f"({self.config.max_request_size}) or buffer.memory",
            )
        if partition is not None:
            if not 0 <= partition < route.num_partitions:
                raise errors.kafka_error(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    f"partition {partition} of {topic!r}: it has {route.num_partitions}",
                )
        elif key is not None:
            partition = partition_for_key(key, route.num_partitions)
        timestamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
        return partition, size, timestamp

    def _check_many(
        self,
        topic: str,
        route: _Route,
        values: Sequence[bytes | None],
        keys: Sequence[bytes | None] | None,
        headers: Sequence[Sequence[Header] | None] | None,
        partitions: Sequence[int | None] | None,
    ) -> tuple[int, BaseException | None]:
        """How many leading records ``send_many`` may send, and what stops the next one."""
        limit = self._record_bytes_max
        if keys is None and headers is None:  # the common case: one pass in C
            if RECORD_OVERHEAD_MAX + max(map(len, filter(None, values)), default=0) > limit:
                for index, value in enumerate(values):
                    if value is not None and RECORD_OVERHEAD_MAX + len(value) > limit:
                        return index, self._too_large(RECORD_OVERHEAD_MAX + len(value))
        else:
            for index, value in enumerate(values):
                key = None if keys is None else keys[index]
                size = encoded_size(key, value, None if headers is None else headers[index])
                if size > limit:
                    return index, self._too_large(size)
        if partitions is not None:
            for index, partition in enumerate(partitions):
                if partition is not None and not 0 <= partition < route.num_partitions:
                    return index, errors.kafka_error(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        f"partition {partition} of {topic!r}: it has {route.num_partitions}",
                    )
        return len(values), None

    def _too_large(self, size: int) -> errors.KafkaError:
        return errors.kafka_error(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"a record of about {size} bytes exceeds max.request.size "
            f"({self.config.max_request_size}) or buffer.memory",
        )

    @staticmethod
    def _partitions_of(
        route: _Route,
        keys: Sequence[bytes | None] | None,
        partitions: Sequence[int | None] | None,
        count: int,
    ) -> list[int | None] | None:
        """Each record's partition (None: sticky), or None when every record is sticky."""
        if partitions is None and (keys is None or all(k is None for k in keys)):
            return None
        chosen: list[int | None] = []
        for index in range(count):
            partition = None if partitions is None else partitions[index]
            if partition is None and keys is not None:
                key = keys[index]
                if key is not None:
                    partition = partition_for_key(key, route.num_partitions)
            chosen.append(partition)
        return chosen

    async def _wait_for_memory(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise errors.timeout_error(
                f"no room in buffer.memory ({self.config.buffer_memory} bytes) "
                f"within max.block.ms ({self.config.max_block_ms})"
            )
        self._batch_done.clear()
        self._acc.change_memory_waiters(+1)
        self._sender.wakeup()
        try:
            async with asyncio.timeout(remaining):
                await self._batch_done.wait()
        except TimeoutError:
            pass
        finally:
            self._acc.change_memory_waiters(-1)

    def _on_batch_done(self) -> None:
        self._batch_done.set()


class SyncProducer:
    """Blocking facade over :class:`Producer` for connector threads.

    ``send`` appends in the calling thread (no loop hop per record) and
    returns a ``concurrent.futures.Future``; ``flush`` and ``close`` block.
    The producer runs on its own :class:`LoopThread` unless one is passed.
    """

    def __init__(
        self,
        config: ProducerConfig | Mapping[str, Any] | None = None,
        *,
        loop_thread: LoopThread | None = None,
        **overrides: Any,
    ) -> None:
        self._owns_loop = loop_thread is None
        self._runner = loop_thread or LoopThread("sluice-producer")
        self._producer = Producer(config, **overrides)
        self.config = self._producer.config
        self._max_block_s = self.config.max_block_ms / 1000
        try:
            self._runner.run(self._producer.start(), self._max_block_s + 1)
        except BaseException:
            self._shutdown_loop()
            raise

    def __enter__(self) -> SyncProducer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> concurrent.futures.Future[RecordMetadata]:
        """Queue one record (blocking while the buffer is full); returns its future."""
        producer = self._producer
        if producer._closed or producer._sender.fatal_error is not None:
            producer._check_open()
        route = producer._routes.get(topic)
        if route is None or route.metadata is not producer._cluster.metadata:
            route = producer._current_route(topic) or self._runner.run(
                producer._route(topic), self._max_block_s + 1
            )
        chosen, size, timestamp = producer._prepare(
            topic, route, value, key, headers, partition, timestamp_ms
        )
        deadline = 0.0
        while True:
            result, future = producer._acc.try_append(
                topic,
                chosen,
                key,
                value,
                headers,
                timestamp,
                None,
                size,
                route.num_partitions,
                route.available,
            )
            if result is AppendResult.APPENDED:
                return future
            self._runner.call_soon(producer._sender.wakeup)
            if result is AppendResult.NEW_BATCH:
                return future
            deadline = deadline or time.monotonic() + self._max_block_s
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.timeout_error(
                    f"no room in buffer.memory within max.block.ms ({self.config.max_block_ms})"
                )
            producer._acc.wait_for_memory(min(remaining, 0.1))
            producer._check_open()

    def send_many(
        self,
        topic: str,
        values: Sequence[bytes | None],
        keys: Sequence[bytes | None] | None = None,
        headers: Sequence[Sequence[Header] | None] | None = None,
        partitions: Sequence[int | None] | None = None,
        timestamps_ms: Sequence[int | None] | None = None,
    ) -> SendManyResult:
        """Queue many records of one topic at once; one future per run of a batch.

        ``send`` for a list: ``values[i]`` with ``keys[i]``, ``headers[i]``,
        ``partitions[i]`` and ``timestamps_ms[i]`` (each list optional; None entries
        mean what None means for ``send``). Records keep their order within each
        partition. Cheaper than ``send`` per record: one lock round per run of
        records going to the same partition, one future per batch they land in, one
        clock read. Errors ``send`` would raise for a record (too large, unknown
        partition, no buffer memory within ``max.block.ms``, producer closed) stop
        the call there and come back in ``SendManyResult.error``; everything before
        that record was appended and is in ``segments``.
        """
        count = len(values)
        for name, column in (("keys", keys), ("headers", headers), ("partitions", partitions)):
            if column is not None and len(column) != count:
                raise ValueError(f"send_many: {name} has {len(column)} entries, values {count}")
        if timestamps_ms is not None and len(timestamps_ms) != count:
            raise ValueError(f"send_many: timestamps_ms has {len(timestamps_ms)}, values {count}")
        segments: list[Segment] = []
        if count == 0:
            return SendManyResult(0, segments)
        producer = self._producer
        try:
            producer._check_open()
            route = producer._routes.get(topic)
            if route is None or route.metadata is not producer._cluster.metadata:
                route = producer._current_route(topic) or self._runner.run(
                    producer._route(topic), self._max_block_s + 1
                )
        except Exception as exc:
            return SendManyResult(0, segments, exc)
        now = int(time.time() * 1000)
        stamps: list[int] | None = None
        if timestamps_ms is not None:
            stamps = [now if t is None else t for t in timestamps_ms]
        limit, error = producer._check_many(topic, route, values, keys, headers, partitions)
        chosen = producer._partitions_of(route, keys, partitions, limit)
        index = 0
        while index < limit:
            partition = None if chosen is None else chosen[index]
            run_end = index + 1
            if chosen is not None:
                while run_end < limit and chosen[run_end] == partition:
                    run_end += 1
            else:
                run_end = limit
            index, run_error = self._append_run(
                topic, route, partition, keys, values, headers, stamps, now, index, run_end,
                segments,
            )
            if run_error is not None:
                return SendManyResult(index, segments, run_error)
        return SendManyResult(limit, segments, error)

    def _append_run(
        self,
        topic: str,
        route: _Route,
        partition: int | None,
        keys: Sequence[bytes | None] | None,
        values: Sequence[bytes | None],
        headers: Sequence[Sequence[Header] | None] | None,
        stamps: list[int] | None,
        now: int,
        start: int,
        stop: int,
        segments: list[Segment],
    ) -> tuple[int, BaseException | None]:
        """Append one run of records to ``partition``, waiting for memory as ``send`` does."""
        producer = self._producer
        deadline = 0.0
        index = start
        while True:
            result, index, appended = producer._acc.try_append_run(
                topic, partition, keys, values, headers, stamps, now, index, stop,
                route.num_partitions, route.available,
            )
            segments.extend(Segment(*segment) for segment in appended)
            if result is not AppendResult.APPENDED:
                self._runner.call_soon(producer._sender.wakeup)
            if result is not AppendResult.NO_MEMORY:
                return index, None
            deadline = deadline or time.monotonic() + self._max_block_s
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return index, errors.timeout_error(
                    f"no room in buffer.memory within max.block.ms ({self.config.max_block_ms})"
                )
            producer._acc.wait_for_memory(min(remaining, 0.1))
            try:
                producer._check_open()
            except Exception as exc:
                return index, exc

    def flush(self, timeout_s: float | None = None) -> None:
        """Block until every record sent so far succeeded or failed."""
        timeout_ms = None if timeout_s is None else int(timeout_s * 1000)
        self._runner.run(
            self._producer.flush(timeout_ms), None if timeout_s is None else timeout_s + 1
        )

    def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of ``topic``."""
        return self._runner.run(self._producer.partitions_for(topic), self._max_block_s + 1)

    def close(self, timeout_s: float | None = None) -> None:
        """Deliver what is queued (up to ``timeout_s``), then release connections and threads."""
        if not self._runner.running:
            return
        timeout_ms = None if timeout_s is None else int(timeout_s * 1000)
        try:
            self._runner.run(
                self._producer.close(timeout_ms), None if timeout_s is None else timeout_s + 5
            )
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        if self._owns_loop:
            self._runner.stop()
