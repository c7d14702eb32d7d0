"""FindCoordinator and the group membership APIs (Join/Sync/Heartbeat/Leave/Describe/List).

A single broker coordinates every group; in a cluster FindCoordinator names one
broker per group (``cluster/coordinator_choice.py``, interim until groups are
replicated)."""

from __future__ import annotations

from typing import Any

from log_engine.broker.cluster.coordinator_choice import group_coordinator
from log_engine.broker.group import GroupState
from log_engine.broker.group_coordinator import JoinRequest
from log_engine.broker.handlers.context import RequestContext
from log_engine.errors import ErrorCode

_GROUP_KEY = 0


async def handle_find_coordinator(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    advertised = ctx.broker.advertised
    if body.get("key_type", _GROUP_KEY) != _GROUP_KEY:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
            "error_message": "transactions are not supported",
            "node_id": -1,
            "host": "",
            "port": -1,
        }
    node = ctx.broker.cluster_node
    if node is not None:
        chosen = group_coordinator(node.image, body["key"], ctx.broker.config.listener.name)
        if chosen is None:
            return {
                "throttle_time_ms": 0,
                "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
                "error_message": "no unfenced broker",
                "node_id": -1,
                "host": "",
                "port": -1,
            }
        broker_id, endpoint = chosen
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "node_id": broker_id,
            "host": endpoint.host,
            "port": endpoint.port,
        }
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "node_id": ctx.broker.node_id,
        "host": advertised.host,
        "port": advertised.port,
    }


async def handle_join_group(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
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
    assignments = {a["member_id"]: bytes(a["assignment"]) for a in body["assignments"]}
    error, assignment = await ctx.broker.groups.sync(
        body["group_id"], body["generation_id"], body["member_id"], assignments
    )
    return {"throttle_time_ms": 0, "error_code": error, "assignment": assignment}


async def handle_heartbeat(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    error = ctx.broker.groups.heartbeat(body["group_id"], body["generation_id"], body["member_id"])
    return {"throttle_time_ms": 0, "error_code": error}


async def handle_leave_group(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
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
