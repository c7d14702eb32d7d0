"""FindCoordinator and the group membership APIs (Join/Sync/Heartbeat/Leave/Describe/List).

A single broker coordinates every group. In a cluster a group's coordinator is
the leader of its ``__consumer_offsets`` partition (``cluster/coordinator_choice.py``;
the first FindCoordinator creates the topic); a broker that does not coordinate a
group (now) answers its group requests NOT_COORDINATOR, or
COORDINATOR_LOAD_IN_PROGRESS while it loads the group's partition
(``group_ownership.py``)."""

from __future__ import annotations

from typing import Any

from log_engine.broker.cluster.coordinator_choice import CoordinatorAnswer, group_coordinator
from log_engine.broker.group import GroupState
from log_engine.broker.group_coordinator import JoinRequest
from log_engine.broker.handlers.context import RequestContext
from log_engine.errors import ErrorCode

_GROUP_KEY = 0
_LOAD_WAIT_S = 1.0
"""How long FindCoordinator at a loading coordinator waits before COORDINATOR_NOT_AVAILABLE."""


async def handle_find_coordinator(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    key_type = body.get("key_type", _GROUP_KEY)
    if ctx.version >= 4:  # KIP-699: a batch of keys, one answer each
        coordinators = []
        for key in body["coordinator_keys"]:
            answer = await _coordinator(ctx, key, key_type)
            coordinators.append({"key": key, **_fields(answer)})
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    answer = await _coordinator(ctx, body["key"], key_type)
    return {"throttle_time_ms": 0, **_fields(answer)}


async def _coordinator(ctx: RequestContext, key: str, key_type: int) -> CoordinatorAnswer:
    if key_type != _GROUP_KEY:
        return CoordinatorAnswer(
            ErrorCode.COORDINATOR_NOT_AVAILABLE, "transactions are not supported"
        )
    node = ctx.broker.cluster_node
    if node is None:
        advertised = ctx.broker.advertised_on(ctx.listener_name)
        return CoordinatorAnswer(
            ErrorCode.NONE, None, ctx.broker.node_id, advertised.host, advertised.port
        )
    why_not = await node.offsets_topic.ensure()
    if why_not is not None:
        return CoordinatorAnswer(ErrorCode.COORDINATOR_NOT_AVAILABLE, why_not)
    answer = group_coordinator(node.image, key, ctx.listener_name)
    if answer.node_id == ctx.broker.node_id:
        await ctx.broker.ownership.wait_loaded(key, _LOAD_WAIT_S)
    if answer.node_id == ctx.broker.node_id and ctx.broker.ownership.error_for(key):
        return CoordinatorAnswer(
            ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker is loading the group's offsets"
        )
    return answer


def _fields(answer: CoordinatorAnswer) -> dict[str, Any]:
    return {
        "error_code": answer.error_code,
        "error_message": answer.error_message,
        "node_id": answer.node_id,
        "host": answer.host,
        "port": answer.port,
    }


def coordinator_error(ctx: RequestContext, group_id: str) -> int:
    """0 if this broker coordinates ``group_id``; else NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS (the client looks the coordinator up again)."""
    return ctx.broker.ownership.error_for(group_id)


async def handle_join_group(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if error := coordinator_error(ctx, body["group_id"]):
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "generation_id": -1,
            "protocol_name": "",
            "leader": "",
            "member_id": body["member_id"],
            "members": [],
        }
    session_ms = body["session_timeout_ms"]
    rebalance_ms = body.get("rebalance_timeout_ms", -1)
    request = JoinRequest(
        group_id=body["group_id"],
        member_id=body["member_id"],
        group_instance_id=body.get("group_instance_id"),
        client_id=ctx.header.client_id or "",
        client_host="/" + ctx.peer.rsplit(":", 1)[0],
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms if rebalance_ms > 0 else session_ms,
        protocol_type=body["protocol_type"],
        protocols=[(p["name"], bytes(p["metadata"])) for p in body["protocols"]],
        require_known_member_id=ctx.version >= 4,
    )
    result = await ctx.broker.groups.join(request)
    return {
        "throttle_time_ms": 0,
        "error_code": result.error_code,
        "generation_id": result.generation_id,
        "protocol_name": result.protocol_name or "",
        "leader": result.leader,
        "member_id": result.member_id,
        "members": [
            {"member_id": mid, "group_instance_id": iid, "metadata": meta}
            for mid, iid, meta in result.members
        ],
    }


async def handle_sync_group(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if error := coordinator_error(ctx, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": error, "assignment": b""}
    assignments = {a["member_id"]: bytes(a["assignment"]) for a in body["assignments"]}
    error, assignment = await ctx.broker.groups.sync(
        body["group_id"], body["generation_id"], body["member_id"], assignments
    )
    return {"throttle_time_ms": 0, "error_code": error, "assignment": assignment}


async def handle_heartbeat(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if error := coordinator_error(ctx, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": error}
    error = ctx.broker.groups.heartbeat(body["group_id"], body["generation_id"], body["member_id"])
    return {"throttle_time_ms": 0, "error_code": error}


async def handle_leave_group(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if error := coordinator_error(ctx, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": error, "members": []}
    if ctx.version < 3:
        (error,) = ctx.broker.groups.leave(body["group_id"], [body["member_id"]])
        return {"throttle_time_ms": 0, "error_code": error}
    members = body["members"]
    errors = ctx.broker.groups.leave(body["group_id"], [m["member_id"] for m in members])
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "members": [
            {
                "member_id": m["member_id"],
                "group_instance_id": m.get("group_instance_id"),
                "error_code": code,
            }
            for m, code in zip(members, errors, strict=True)
        ],
    }


async def handle_describe_groups(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    described = []
    for group_id in body["groups"]:
        if error := coordinator_error(ctx, group_id):
            described.append(
                {
                    "error_code": error,
                    "group_id": group_id,
                    "group_state": "",
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": [],
                }
            )
            continue
        group = ctx.broker.groups.groups.get(group_id)
        if group is None:
            state = "Empty" if group_id in ctx.broker.offsets.groups() else GroupState.DEAD.value
            described.append(
                {
                    "error_code": 0,
                    "group_id": group_id,
                    "group_state": state,
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": [],
                }
            )
            continue
        members = [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.metadata_for(group.protocol_name or ""),
                "member_assignment": m.assignment,
            }
            for m in group.members.values()
        ]
        described.append(
            {
                "error_code": 0,
                "group_id": group_id,
                "group_state": group.state.value,
                "protocol_type": group.protocol_type or "",
                "protocol_data": group.protocol_name or "",
                "members": members,
            }
        )
    return {"throttle_time_ms": 0, "groups": described}


async def handle_list_groups(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    groups = {gid: g.protocol_type or "" for gid, g in ctx.broker.groups.groups.items()}
    for group_id in ctx.broker.offsets.groups():
        groups.setdefault(group_id, "consumer")
    listed = [{"group_id": gid, "protocol_type": ptype} for gid, ptype in sorted(groups.items())]
    return {"throttle_time_ms": 0, "error_code": 0, "groups": listed}
