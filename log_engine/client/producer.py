"""The producer: ``send()`` records, get futures of where they landed.

:class:`Producer` is the asyncio client; :class:`SyncProducer` wraps it for
plain threads. Both append records straight into per-partition batches (the
accumulator is thread-safe, so a connector thread does not hop to the event
loop per record) and a sender task on the loop ships them; see
:mod:`log_engine.client.accumulator` and :mod:`log_engine.client.sender`.

``SyncProducer.send_many`` queues a list of records of one topic in one call,
with one future per run of records sharing a batch instead of one per record
(the connect runtime's source path: a poll's records at once); see
:mod:`log_engine.client.producer_many`.

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
from typing import Any

from log_engine.client import errors
from log_engine.client.accumulator import AppendResult, RecordAccumulator
from log_engine.client.cluster import Cluster, ClusterMetadata
from log_engine.client.config import ProducerConfig
from log_engine.client.loop_thread import LoopThread
from log_engine.client.partitioner import StickyPartitioner, partition_for_key
from log_engine.client.producer_batch import RECORD_OVERHEAD_MAX, encoded_size
from log_engine.client.producer_many import SendManyResult, send_many
from log_engine.client.sender import Sender
from log_engine.client.types import Header, RecordMetadata
from log_engine.errors import ErrorCode


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
        """Queue many records of one topic at once (see :mod:`.producer_many`)."""
        return send_many(
            self._producer, self._runner, topic, values, keys, headers, partitions, timestamps_ms
        )

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
