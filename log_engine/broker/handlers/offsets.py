"""ListOffsets (positions by time) and the group offset APIs OffsetCommit / OffsetFetch.

ListOffsets is served by a partition's leader; with Kafka's debugging replica id
(-2) any replica answers from its own log (how an operator, or a test, sees a
follower's log start offset).

OffsetCommit is answered once the offsets are committed: on a replicated
``__consumer_offsets`` partition once its high watermark covers them (see
``offset_store.py`` for the errors)."""

from __future__ import annotations

import logging
import time
from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.handlers.groups import coordinator_error
from log_engine.broker.offset_store import CommittedOffset
from log_engine.errors import ErrorCode

log = logging.getLogger(__name__)

DEBUGGING_REPLICA_ID = -2
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
_OFFSET_METADATA_MAX_BYTES = 4096


async def handle_list_offsets(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for topic in body["topics"]:
        any_replica = body.get("replica_id", -1) == DEBUGGING_REPLICA_ID
        results = [
            _list_offset(ctx, topic["name"], p, any_replica) for p in topic["partitions"]
        ]
        topics.append({"name": topic["name"], "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


def _list_offset(
    ctx: RequestContext, topic: str, request: dict[str, Any], any_replica: bool = False
) -> dict[str, Any]:
    index = request["partition_index"]
    result = {
        "partition_index": index,
        "error_code": 0,
        "timestamp": -1,
        "offset": -1,
        "leader_epoch": 0,
        "old_style_offsets": [],
    }
    partition = ctx.broker.topics.partition(topic, index)
    if partition is None:
        return {**result, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if partition.state is not None and not any_replica:
        error = partition.leader_error(request.get("current_leader_epoch", -1))
        if error:
            return {**result, "error_code": error}
        result["leader_epoch"] = partition.leader_epoch
    timestamp = request["timestamp"]
    if timestamp == EARLIEST_TIMESTAMP:
        return {**result, "offset": partition.log_start_offset}
    if timestamp in (LATEST_TIMESTAMP, MAX_TIMESTAMP):
        return {**result, "offset": partition.high_watermark}
    found = partition.log.offset_for_timestamp(timestamp)
    if found is None:
        return result
    offset, found_timestamp = found
    return {**result, "offset": offset, "timestamp": found_timestamp}


async def handle_offset_commit(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    group_id = body["group_id"]
    error = _commit_error(ctx, body)
    now_ms = int(time.time() * 1000)
    accepted: dict[tuple[str, int], CommittedOffset] = {}
    topics = []
    for topic in body["topics"]:
        partitions = []
        for p in topic["partitions"]:
            code = error
            metadata = p.get("committed_metadata") or ""
            if not code and len(metadata.encode()) > _OFFSET_METADATA_MAX_BYTES:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            if (
                not code
                and ctx.broker.topics.partition(topic["name"], p["partition_index"]) is None
            ):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if not code:
                accepted[(topic["name"], p["partition_index"])] = CommittedOffset(
                    p["committed_offset"], p.get("committed_leader_epoch", -1), metadata, now_ms
                )
            partitions.append({"partition_index": p["partition_index"], "error_code": code})
        topics.append({"name": topic["name"], "partitions": partitions})
    failed = await ctx.broker.offsets.commit(group_id, accepted)
    if failed:  # nothing of this request is committed; the client retries or re-finds
        for entry in topics:
            for p in entry["partitions"]:
                if (entry["name"], p["partition_index"]) in accepted:
                    p["error_code"] = failed
    return {"throttle_time_ms": 0, "topics": topics}


def _commit_error(ctx: RequestContext, body: dict[str, Any]) -> int:
    if not body["group_id"]:
        return ErrorCode.INVALID_GROUP_ID
    if error := coordinator_error(ctx, body["group_id"]):
        return error
    generation = body.get("generation_id_or_member_epoch", -1)
    return ctx.broker.groups.is_member(body["group_id"], body.get("member_id", ""), generation)


async def handle_offset_fetch(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    error = coordinator_error(ctx, body["group_id"])
    committed = {} if error else ctx.broker.offsets.fetch(body["group_id"])
    requested = body.get("topics")
    if requested is None:  # all partitions the group has offsets for
        wanted: dict[str, list[int]] = {}
        for topic, index in sorted(committed):
            wanted.setdefault(topic, []).append(index)
    else:
        wanted = {t["name"]: list(t["partition_indexes"]) for t in requested}
    topics = []
    for name, indexes in wanted.items():
        partitions = []
        for index in indexes:
            entry = committed.get((name, index))
            partitions.append(
                {
                    "partition_index": index,
                    "committed_offset": entry.offset if entry else -1,
                    "committed_leader_epoch": entry.leader_epoch if entry else -1,
                    "metadata": entry.metadata if entry else "",
                    "error_code": error,
                }
            )
        topics.append({"name": name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics, "error_code": error}
