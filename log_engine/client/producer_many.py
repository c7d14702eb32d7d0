"""Sending a list of records of one topic in one call: ``SyncProducer.send_many``.

``send`` costs a lock round, a partition choice, a clock read and a future per
record. A connector thread that holds a whole batch (a source task's poll)
hands it over at once instead: the records are checked column by column,
split into runs going to the same partition (sticky when unkeyed), and each
run is appended under one lock round (:meth:`RecordAccumulator.try_append_run`),
filling the open batch and then new ones. Each run of records that landed in
one batch gets one future (a :class:`Segment`), resolved with the batch.

Errors ``send`` would raise for a record (too large, unknown partition, no
buffer memory within ``max.block.ms``, producer closed) stop the call at that
record; the records before it were appended, and the result says where it
stopped and why (:class:`SendManyResult`), so the caller can retry the rest.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from log_engine.client import errors
from log_engine.client.accumulator import AppendResult
from log_engine.client.loop_thread import LoopThread
from log_engine.client.partitioner import partition_for_key
from log_engine.client.producer_batch import RECORD_OVERHEAD_MAX, encoded_size
from log_engine.client.types import Header, RecordMetadata
from log_engine.errors import ErrorCode

if TYPE_CHECKING:
    from log_engine.client.producer import Producer, _Route


class Segment(NamedTuple):
    """Records ``start``..``stop - 1`` of a ``send_many`` call, delivered together.

    ``future`` resolves to their ``RecordMetadata`` list once the broker has them, or
    fails with the batch's error (none of them landed), or, when the producer split a
    batch refused as too large and only some of them landed, with a
    :class:`~log_engine.client.errors.PartialDeliveryError` naming those that did not.
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


def send_many(
    producer: Producer,
    runner: LoopThread,
    topic: str,
    values: Sequence[bytes | None],
    keys: Sequence[bytes | None] | None = None,
    headers: Sequence[Sequence[Header] | None] | None = None,
    partitions: Sequence[int | None] | None = None,
    timestamps_ms: Sequence[int | None] | None = None,
) -> SendManyResult:
    """Queue ``values`` (with the optional parallel columns) to ``topic``; see the module doc.

    ``values[i]`` goes with ``keys[i]``, ``headers[i]``, ``partitions[i]`` and
    ``timestamps_ms[i]``; a None entry means what None means for ``send``.
    Records keep their order within each partition. Raises ValueError when a
    column's length differs from ``values``'.
    """
    count = len(values)
    for name, column in (
        ("keys", keys), ("headers", headers), ("partitions", partitions),
        ("timestamps_ms", timestamps_ms),
    ):
        if column is not None and len(column) != count:
            raise ValueError(f"send_many: {name} has {len(column)} entries, values {count}")
    segments: list[Segment] = []
    if count == 0:
        return SendManyResult(0, segments)
    max_block_s = producer.config.max_block_ms / 1000
    try:
        producer._check_open()
        route = producer._routes.get(topic)
        if route is None or route.metadata is not producer._cluster.metadata:
            route = producer._current_route(topic) or runner.run(
                producer._route(topic), max_block_s + 1
            )
    except Exception as exc:
        return SendManyResult(0, segments, exc)
    now = int(time.time() * 1000)
    stamps: list[int] | None = None
    if timestamps_ms is not None:
        stamps = [now if t is None else t for t in timestamps_ms]
    limit, error = _sendable(producer, topic, route, values, keys, headers, partitions)
    chosen = _partitions_of(route, keys, partitions, limit)
    index = 0
    while index < limit:
        partition = None if chosen is None else chosen[index]
        run_end = limit
        if chosen is not None:
            run_end = index + 1
            while run_end < limit and chosen[run_end] == partition:
                run_end += 1
        index, run_error = _append_run(
            producer, runner, route, topic, partition, keys, values, headers, stamps, now,
            index, run_end, segments,
        )
        if run_error is not None:
            return SendManyResult(index, segments, run_error)
    return SendManyResult(limit, segments, error)


def _append_run(
    producer: Producer,
    runner: LoopThread,
    route: _Route,
    topic: str,
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
    max_block_s = producer.config.max_block_ms / 1000
    deadline = 0.0
    index = start
    while True:
        result, index, appended = producer._acc.try_append_run(
            topic, partition, keys, values, headers, stamps, now, index, stop,
            route.num_partitions, route.available,
        )
        segments.extend(Segment(*segment) for segment in appended)
        if result is not AppendResult.APPENDED:
            runner.call_soon(producer._sender.wakeup)
        if result is not AppendResult.NO_MEMORY:
            return index, None
        deadline = deadline or time.monotonic() + max_block_s
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return index, errors.timeout_error(
                f"no room in buffer.memory within max.block.ms ({producer.config.max_block_ms})"
            )
        producer._acc.wait_for_memory(min(remaining, 0.1))
        try:
            producer._check_open()
        except Exception as exc:
            return index, exc


def _sendable(
    producer: Producer,
    topic: str,
    route: _Route,
    values: Sequence[bytes | None],
    keys: Sequence[bytes | None] | None,
    headers: Sequence[Sequence[Header] | None] | None,
    partitions: Sequence[int | None] | None,
) -> tuple[int, BaseException | None]:
    """How many leading records may be sent, and the error stopping the next one."""
    limit = producer._record_bytes_max
    if keys is None and headers is None:  # the common case: one pass in C
        if RECORD_OVERHEAD_MAX + max(map(len, filter(None, values)), default=0) > limit:
            for index, value in enumerate(values):
                if value is not None and RECORD_OVERHEAD_MAX + len(value) > limit:
                    return index, _too_large(producer, RECORD_OVERHEAD_MAX + len(value))
    else:
        for index, value in enumerate(values):
            key = None if keys is None else keys[index]
            size = encoded_size(key, value, None if headers is None else headers[index])
            if size > limit:
                return index, _too_large(producer, size)
    if partitions is not None:
        for index, partition in enumerate(partitions):
            if partition is not None and not 0 <= partition < route.num_partitions:
                return index, errors.kafka_error(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    f"partition {partition} of {topic!r}: it has {route.num_partitions}",
                )
    return len(values), None


def _too_large(producer: Producer, size: int) -> errors.KafkaError:
    return errors.kafka_error(
        ErrorCode.MESSAGE_TOO_LARGE,
        f"a record of about {size} bytes exceeds max.request.size "
        f"({producer.config.max_request_size}) or buffer.memory",
    )


def _partitions_of(
    route: _Route,
    keys: Sequence[bytes | None] | None,
    partitions: Sequence[int | None] | None,
    count: int,
) -> list[int | None] | None:
    """Each record's partition (None: sticky), or None when every record is sticky."""
    if partitions is None and (keys is None or keys.count(None) == len(keys)):
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
