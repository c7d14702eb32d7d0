"""Fetch: whole stored batches as file slices, with long-poll.

Per KIP-74 the first partition with data returns at least one whole batch even
when it exceeds the byte limits, so a consumer never gets stuck behind a large
batch. Fetch sessions (KIP-227) are declined by answering session id 0, which
makes clients send full fetch requests. Records are never decoded here.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}


def _read_all(
    ctx: RequestContext, body: dict[str, Any], wanted: list[tuple[str, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], int, list[Partition]]:
    budget = body.get("max_bytes", 0x7FFFFFFF)
    total = 0
    waitable: list[Partition] = []
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for topic, request in wanted:
        partition = ctx.broker.topics.partition(topic, request["partition"])
        limit = min(request["partition_max_bytes"], max(budget - total, 0))
        result = _read_partition(partition, request, limit, first=total == 0)
        total += result.pop("_size")
        if partition is not None and result["error_code"] == 0:
            waitable.append(partition)
        by_topic.setdefault(topic, []).append(result)
    responses = [{"topic": t, "partitions": parts} for t, parts in by_topic.items()]
    return responses, total, waitable


def _read_partition(
    partition: Partition | None, request: dict[str, Any], limit: int, first: bool
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "partition_index": request["partition"],
        "error_code": 0,
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        "records": None,
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
            request["fetch_offset"], limit, max_offset=hw, min_one_batch=first
        )
    except OffsetOutOfRangeError:
        result["error_code"] = ErrorCode.OFFSET_OUT_OF_RANGE
        return result
    result["records"] = read.slices
    result["_size"] = read.size_bytes
    return result


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
