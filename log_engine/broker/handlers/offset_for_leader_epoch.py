"""OffsetForLeaderEpoch: where a leader epoch ended on this broker's log (KIP-101).

A follower asks before fetching after a leader change (see
:mod:`log_engine.broker.replica.fetcher`); consumers may ask to detect log
truncation. Only the leader answers: other brokers get NOT_LEADER_OR_FOLLOWER,
and a ``current_leader_epoch`` older or newer than the partition's gets
FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH. The answer comes from the
leader-epoch cache: the largest epoch not newer than the one asked, and its
end offset (the next epoch's start, or the log end for the current epoch).
"""

from __future__ import annotations

from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.errors import ErrorCode


async def handle_offset_for_leader_epoch(
    ctx: RequestContext, body: dict[str, Any]
) -> dict[str, Any]:
    topics = []
    for topic in body["topics"]:
        results = [_end_offset(ctx, topic["topic"], p) for p in topic["partitions"]]
        topics.append({"topic": topic["topic"], "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


def _end_offset(ctx: RequestContext, topic: str, request: dict[str, Any]) -> dict[str, Any]:
    result = {
        "error_code": 0,
        "partition": request["partition"],
        "leader_epoch": -1,
        "end_offset": -1,
    }
    partition = ctx.broker.topics.partition(topic, request["partition"])
    if partition is None:
        return {**result, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    error = partition.leader_error(request.get("current_leader_epoch", -1))
    if error:
        return {**result, "error_code": error}
    epoch, end_offset = partition.log.leader_epochs.end_offset_for(request["leader_epoch"])
    return {**result, "leader_epoch": epoch, "end_offset": end_offset}
