"""Gates of the group APIs (GROUP_AUTHORIZATION_FAILED when refused).

- FindCoordinator: DESCRIBE on the group (a transaction coordinator: DESCRIBE
  on the transactional id, TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
- JoinGroup, SyncGroup, Heartbeat, LeaveGroup: READ on the group.
- OffsetCommit: READ on the group, then READ on each topic
  (TOPIC_AUTHORIZATION_FAILED per partition).
- OffsetFetch: DESCRIBE on the group, then DESCRIBE on each topic; with no
  topics named ("all"), topics the principal may not DESCRIBE are left out.
- DescribeGroups: DESCRIBE on each group; ListGroups: every group with
  DESCRIBE on the cluster, else only the groups the principal may DESCRIBE.
"""

from __future__ import annotations

from typing import Any

from log_engine.broker.authorization.checks import (
    DESCRIBE,
    GROUP,
    READ,
    TOPIC,
    TRANSACTIONAL_ID,
    Gate,
    Handler,
    allowed,
    allowed_on_cluster,
    denied_message,
    split,
)
from log_engine.broker.handlers.context import RequestContext
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

_GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
_TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


async def find_coordinator(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    transactional = body.get("key_type", 0) == 1
    if ctx.version < 4:
        if _may_find(ctx, transactional, body["key"]):
            return await handler(ctx, body)
        return {"throttle_time_ms": 0, **_find_refusal(ctx, transactional, body["key"])}
    # v4 (KIP-699): a batch of keys; the permitted ones go to the handler, each
    # refused one gets its own error entry, in the order the request named them
    keys: list[str] = body["coordinator_keys"]
    permitted = [key for key in keys if _may_find(ctx, transactional, key)]
    answer: dict[str, Any] = {"throttle_time_ms": 0, "coordinators": []}
    if permitted:
        answer = await handler(ctx, {**body, "coordinator_keys": permitted}) or answer
    found = {entry["key"]: entry for entry in answer["coordinators"]}
    answer["coordinators"] = [
        found.get(key) or {"key": key, **_find_refusal(ctx, transactional, key)} for key in keys
    ]
    return answer


def _may_find(ctx: RequestContext, transactional: bool, key: str) -> bool:
    return allowed(ctx, DESCRIBE, TRANSACTIONAL_ID if transactional else GROUP, key)


def _find_refusal(ctx: RequestContext, transactional: bool, key: str) -> dict[str, Any]:
    if transactional:
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        message = "Transactional Id authorization failed: " + denied_message(
            ctx, DESCRIBE, f"transactional id {key!r}"
        )
    else:
        code = _GROUP_DENIED
        message = "Group authorization failed: " + denied_message(ctx, DESCRIBE, f"group {key!r}")
    return {"error_code": code, "error_message": message, "node_id": -1, "host": "", "port": -1}


async def group_member(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup: READ on the group."""
    if allowed(ctx, READ, GROUP, body["group_id"]):
        return await handler(ctx, body)
    return {
        "throttle_time_ms": 0,
        "error_code": _GROUP_DENIED,
        "generation_id": -1,
        "protocol_name": None,
        "leader": "",
        "member_id": body.get("member_id", ""),
        "members": [],
        "assignment": b"",
    }


async def offset_commit(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    if not allowed(ctx, READ, GROUP, body["group_id"]):
        kept: list[dict[str, Any]] = []
        refused = body["topics"]
        code = _GROUP_DENIED
    else:
        kept, refused = split(body["topics"], lambda t: allowed(ctx, READ, TOPIC, t["name"]))
        code = _TOPIC_DENIED
    if not refused:
        return await handler(ctx, body)
    if kept:
        response = await handler(ctx, {**body, "topics": kept})
        assert response is not None
    else:
        response = {"throttle_time_ms": 0, "topics": []}
    response["topics"].extend(
        {
            "name": topic["name"],
            "partitions": [
                {"partition_index": p["partition_index"], "error_code": code}
                for p in topic["partitions"]
            ],
        }
        for topic in refused
    )
    return response


def _fetch_refusal(index: int, code: int) -> dict[str, Any]:
    return {
        "partition_index": index,
        "committed_offset": -1,
        "committed_leader_epoch": -1,
        "metadata": "",
        "error_code": code,
    }


async def offset_fetch(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    requested = body.get("topics")
    if not allowed(ctx, DESCRIBE, GROUP, body["group_id"]):
        topics = [
            {"name": t["name"],
             "partitions": [_fetch_refusal(i, _GROUP_DENIED) for i in t["partition_indexes"]]}
            for t in requested or []
        ]
        return {"throttle_time_ms": 0, "topics": topics, "error_code": _GROUP_DENIED}
    if requested is None:
        response = await handler(ctx, body)
        assert response is not None
        response["topics"] = [
            t for t in response["topics"] if allowed(ctx, DESCRIBE, TOPIC, t["name"])
        ]
        return response
    kept, refused = split(requested, lambda t: allowed(ctx, DESCRIBE, TOPIC, t["name"]))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topics": kept})
    assert response is not None
    response["topics"].extend(
        {"name": t["name"],
         "partitions": [_fetch_refusal(i, _TOPIC_DENIED) for i in t["partition_indexes"]]}
        for t in refused
    )
    return response


async def describe_groups(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused = split(body["groups"], lambda g: allowed(ctx, DESCRIBE, GROUP, g))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "groups": kept})
    assert response is not None
    response["groups"].extend(
        {
            "error_code": _GROUP_DENIED,
            "group_id": group,
            "group_state": "",
            "protocol_type": "",
            "protocol_data": "",
            "members": [],
        }
        for group in refused
    )
    return response


async def list_groups(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    response = await handler(ctx, body)
    assert response is not None
    if not allowed_on_cluster(ctx, DESCRIBE):
        response["groups"] = [
            g for g in response["groups"] if allowed(ctx, DESCRIBE, GROUP, g["group_id"])
        ]
    return response


GATES: dict[ApiKey, Gate] = {
    ApiKey.FIND_COORDINATOR: find_coordinator,
    ApiKey.JOIN_GROUP: group_member,
    ApiKey.SYNC_GROUP: group_member,
    ApiKey.HEARTBEAT: group_member,
    ApiKey.LEAVE_GROUP: group_member,
    ApiKey.OFFSET_COMMIT: offset_commit,
    ApiKey.OFFSET_FETCH: offset_fetch,
    ApiKey.DESCRIBE_GROUPS: describe_groups,
    ApiKey.LIST_GROUPS: list_groups,
}
