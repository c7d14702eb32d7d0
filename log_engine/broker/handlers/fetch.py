"""Fetch: whole stored batches as file slices, with long-poll.

Per KIP-74 the first partition with data returns at least one whole batch even
when it exceeds the byte limits, so a consumer never gets stuck behind a large
batch. Fetch sessions (KIP-227) are declined by answering session id 0, which
makes clients send full fetch requests. Records are never decoded here.

Replication (``docs/replication.md``): a partition this broker does not lead
answers NOT_LEADER_OR_FOLLOWER; a ``current_leader_epoch`` older than the
partition's gets FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
Consumers (``replica_id`` -1) read up to the high watermark; a follower
(``replica_id`` >= 0) reads up to the log end and its ``fetch_offset`` tells
the leader its log end, which may move the high watermark and the ISR.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.partition import Partition
from log_engine.errors import ErrorCode, OffsetOutOfRangeError

_MAX_WAIT_CAP_MS = 30_000


async def handle_fetch(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    wanted = [(topic["topic"], p) for topic in body["topics"] for p in topic["partitions"]]
    max_wait_ms = min(max(body["max_wait_ms"], 0), _MAX_WAIT_CAP_MS)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait_ms / 1000
    while True:
        responses, size, waitable = _read_all(ctx, body, wanted)
        remaining = deadline - loop.time()
        if size >= body["min_bytes"] or remaining <= 0 or not waitable:
            break
        await _wait_for_data(waitable, remaining)
    if ctx.broker.metrics is not None:
        ctx.broker.metrics.fetch_answered(responses, body.get("replica_id", -1) >= 0)
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}


def _read_all(
    ctx: RequestContext, body: dict[str, Any], wanted: list[tuple[str, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], int, list[Partition]]:
    budget = body.get("max_bytes", 0x7FFFFFFF)
    replica_id = body.get("replica_id", -1)
    total = 0
    waitable: list[Partition] = []
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for topic, request in wanted:
        partition = ctx.broker.topics.partition(topic, request["partition"])
        limit = min(request["partition_max_bytes"], max(budget - total, 0))
        if partition is not None and partition.state is not None:
            result = _read_replicated(ctx, partition, request, limit, total == 0, replica_id)
        else:
            result = _read_partition(partition, request, limit, first=total == 0)
            index = request["partition"]
            if partition is None and ctx.broker.replicas.hosts_elsewhere(topic, index):
                result["error_code"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
        total += result.pop("_size")
        if partition is not None and result["error_code"] == 0:
            waitable.append(partition)
        by_topic.setdefault(topic, []).append(result)
    responses = [{"topic": t, "partitions": parts} for t, parts in by_topic.items()]
    return responses, total, waitable


def _read_partition(
    partition: Partition | None,
    request: dict[str, Any],
    limit: int,
    first: bool,
    up_to_log_end: bool = False,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "partition_index": request["partition"],
        "error_code": 0,
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        "records": b"",  # empty, as Kafka: librdkafka refuses a null record set
        "_size": 0,
    }
    if partition is None:
        result["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return result
    hw = partition.high_watermark
    result.update(
        high_watermark=hw, last_stable_offset=hw, log_start_offset=partition.log_start_offset
    )
    try:
        read = partition.log.read(
            request["fetch_offset"],
            limit,
            max_offset=None if up_to_log_end else hw,
            min_one_batch=first,
        )
    except OffsetOutOfRangeError:
        result["error_code"] = ErrorCode.OFFSET_OUT_OF_RANGE
        return result
    result["records"] = read.slices
    result["_size"] = read.size_bytes
    return result


def _read_replicated(
    ctx: RequestContext,
    partition: Partition,
    request: dict[str, Any],
    limit: int,
    first: bool,
    replica_id: int,
) -> dict[str, Any]:
    """A fetch from a partition with a controller-given state (leader checks, HW rules)."""
    error = partition.leader_error(request.get("current_leader_epoch", -1))
    if error:
        return {
            "partition_index": request["partition"],
            "error_code": error,
            "high_watermark": -1,
            "last_stable_offset": -1,
            "log_start_offset": -1,
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            "records": b"",
            "_size": 0,
        }
    if replica_id < 0:
        return _read_partition(partition, request, limit, first=first)
    partition.record_follower_fetch(replica_id, request["fetch_offset"], _now_ms())
    ctx.broker.replicas.follower_fetched(partition)
    return _read_partition(partition, request, limit, first=first, up_to_log_end=True)


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


async def _wait_for_data(partitions: list[Partition], timeout_s: float) -> None:
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    for partition in partitions:
        partition.add_waiter(waiter)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiter), timeout_s)
    finally:
        for partition in partitions:
            partition.remove_waiter(waiter)
        if not waiter.done():
            waiter.cancel()
