"""Gates of the data APIs: Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, Metadata.

- Produce: WRITE on each topic (TOPIC_AUTHORIZATION_FAILED per partition); a
  transactional produce also WRITE on its transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition).
- Fetch: READ on each topic; a follower's fetch (``replica_id`` >= 0)
  CLUSTER_ACTION on the cluster.
- ListOffsets, OffsetForLeaderEpoch: DESCRIBE on each topic (a follower's
  OffsetForLeaderEpoch: CLUSTER_ACTION).
- Metadata: "all topics" lists only the topics the principal may DESCRIBE; a
  named one it may not gets TOPIC_AUTHORIZATION_FAILED; auto-creating a topic
  needs CREATE on the cluster or the topic (TOPIC_AUTHORIZATION_FAILED without).
"""

from __future__ import annotations

from typing import Any

from log_engine.acls import AclOperation
from log_engine.broker.authorization.checks import (
    CLUSTER_ACTION,
    DESCRIBE,
    READ,
    TOPIC,
    TRANSACTIONAL_ID,
    WRITE,
    Gate,
    Handler,
    allowed,
    allowed_on_cluster,
    denied_message,
    may_create_topic,
    split,
)
from log_engine.broker.handlers.context import RequestContext
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

_TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


async def produce(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    transactional_id = body.get("transactional_id")
    if transactional_id is not None and not allowed(
        ctx, WRITE, TRANSACTIONAL_ID, transactional_id
    ):
        kept: list[dict[str, Any]] = []
        refused = body["topic_data"]
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        kept, refused = split(body["topic_data"], lambda t: allowed(ctx, WRITE, TOPIC, t["name"]))
        code = _TOPIC_DENIED
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topic_data": kept})
    if response is None:  # acks=0
        return None
    message = denied_message(ctx, WRITE, "this topic")
    response["responses"].extend(
        {
            "name": topic["name"],
            "partition_responses": [
                {"index": p["index"], "error_code": code, "base_offset": -1,
                 "error_message": message}
                for p in topic["partition_data"]
            ],
        }
        for topic in refused
    )
    return response


def _fetch_refusal(partition: int, code: int) -> dict[str, Any]:
    return {
        "partition_index": partition,
        "error_code": code,
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        "records": b"",  # empty, as Kafka: librdkafka refuses a null record set
    }


Topics = list[dict[str, Any]]


def _by_replica_or_topic(
    ctx: RequestContext, body: dict[str, Any], replica_id: int, operation: AclOperation
) -> tuple[Topics, Topics, int]:
    """The request's topics split into allowed and refused, and the refusal's code: a
    follower (``replica_id`` >= 0) needs CLUSTER_ACTION for all of them, a client
    ``operation`` on each topic."""
    if replica_id >= 0:
        if allowed_on_cluster(ctx, CLUSTER_ACTION):
            return body["topics"], [], 0
        return [], body["topics"], ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    kept, refused = split(body["topics"], lambda t: allowed(ctx, operation, TOPIC, t["topic"]))
    return kept, refused, _TOPIC_DENIED


async def fetch(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused, code = _by_replica_or_topic(ctx, body, body.get("replica_id", -1), READ)
    if not refused:
        return await handler(ctx, body)
    if kept:
        response = await handler(ctx, {**body, "topics": kept})
        assert response is not None
    else:  # nothing to wait for: answer at once
        response = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": []}
    if code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
        response["error_code"] = code
    response["responses"].extend(
        {
            "topic": topic["topic"],
            "partitions": [_fetch_refusal(p["partition"], code) for p in topic["partitions"]],
        }
        for topic in refused
    )
    return response


async def list_offsets(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused = split(body["topics"], lambda t: allowed(ctx, DESCRIBE, TOPIC, t["name"]))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topics": kept})
    assert response is not None
    response["topics"].extend(
        {
            "name": topic["name"],
            "partitions": [
                {"partition_index": p["partition_index"], "error_code": _TOPIC_DENIED,
                 "old_style_offsets": [], "timestamp": -1, "offset": -1, "leader_epoch": -1}
                for p in topic["partitions"]
            ],
        }
        for topic in refused
    )
    return response


async def offset_for_leader_epoch(
    ctx: RequestContext, body: dict[str, Any], handler: Handler
) -> Any:
    kept, refused, code = _by_replica_or_topic(ctx, body, body.get("replica_id", -2), DESCRIBE)
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topics": kept})
    assert response is not None
    response["topics"].extend(
        {
            "topic": topic["topic"],
            "partitions": [
                {"error_code": code, "partition": p["partition"], "leader_epoch": -1,
                 "end_offset": -1}
                for p in topic["partitions"]
            ],
        }
        for topic in refused
    )
    return response


def _metadata_refusal(name: str) -> dict[str, Any]:
    return {"error_code": _TOPIC_DENIED, "name": name, "is_internal": False, "partitions": []}


async def metadata(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    requested = body.get("topics")
    if requested is None or (ctx.version == 0 and not requested):  # every topic
        every = await handler(ctx, body)
        assert every is not None
        every["topics"] = [t for t in every["topics"] if allowed(ctx, DESCRIBE, TOPIC, t["name"])]
        return every
    names = list(dict.fromkeys(t["name"] for t in requested))
    visible, hidden = split(names, lambda name: allowed(ctx, DESCRIBE, TOPIC, name))
    auto_create = (
        body.get("allow_auto_topic_creation", True) and ctx.broker.config.auto_create_topics_enable
    )
    creatable, not_creatable = (
        split(visible, lambda name: may_create_topic(ctx, name)) if auto_create else (visible, [])
    )
    topics: dict[str, dict[str, Any]] = {}
    response: dict[str, Any] | None = None
    for group, create in ((creatable, True), (not_creatable, False)):
        if group or response is None:
            answer = await handler(
                ctx, {**body, "topics": [{"name": n} for n in group],
                      "allow_auto_topic_creation": create},
            )
            assert answer is not None
            response = answer if response is None else response
            for t in answer["topics"]:
                if t["name"] in group:
                    topics[t["name"]] = t
    assert response is not None
    for name in not_creatable:  # not there, and this principal may not create it
        if topics.get(name, {}).get("error_code") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            topics[name] = _metadata_refusal(name)
    for name in hidden:
        topics[name] = _metadata_refusal(name)
    response["topics"] = [topics[name] for name in names if name in topics]
    return response


GATES: dict[ApiKey, Gate] = {
    ApiKey.PRODUCE: produce,
    ApiKey.FETCH: fetch,
    ApiKey.LIST_OFFSETS: list_offsets,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: offset_for_leader_epoch,
    ApiKey.METADATA: metadata,
}
