"""CreateAcls, DescribeAcls and DeleteAcls, answered as Kafka answers them.

With no authorizer (``authorizer.class.name`` empty) every call gets
SECURITY_DISABLED. Creating and deleting need ALTER on the cluster,
describing needs DESCRIBE on it (CLUSTER_AUTHORIZATION_FAILED otherwise).
A binding or filter with an unknown or unusable code gets INVALID_REQUEST
with a message naming the field; the others in the request still apply.
"""

from __future__ import annotations

from typing import Any

from log_engine.acls import (
    CLUSTER_NAME,
    AclBinding,
    AclError,
    AclFilter,
    AclOperation,
    ResourceType,
)
from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.security.acl_store import AclWriteError
from log_engine.errors import ErrorCode
from log_engine.protocol.acl_bodies import binding_from_creation, filter_from_body, matching_body

_DISABLED = "no authorizer is configured on this broker (authorizer.class.name)"


def _cluster_denied(ctx: RequestContext, operation: AclOperation) -> str | None:
    authorizer = ctx.broker.authorizer
    assert authorizer is not None
    if authorizer.authorize(
        ctx.principal, ctx.client_host, operation, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        return None
    return f"{ctx.principal} may not {operation.name} the cluster (ACLs)"


async def handle_create_acls(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    creations = body["creations"]
    refusal = (
        (ErrorCode.SECURITY_DISABLED, _DISABLED)
        if ctx.broker.authorizer is None
        else _refused(_cluster_denied(ctx, AclOperation.ALTER))
    )
    if refusal is not None:
        return {"throttle_time_ms": 0, "results": [_result(*refusal) for _ in creations]}
    results: list[dict[str, Any]] = []
    valid: list[AclBinding] = []
    for item in creations:
        try:
            valid.append(binding_from_creation(item))
        except AclError as exc:
            results.append(_result(ErrorCode.INVALID_REQUEST, str(exc)))
            continue
        results.append(_result(0, None))
    assert ctx.broker.authorizer is not None
    try:
        await ctx.broker.authorizer.create(valid)
    except AclWriteError as exc:
        failed = _result(exc.error_code, str(exc))
        results = [r if r["error_code"] else failed for r in results]
    return {"throttle_time_ms": 0, "results": results}


async def handle_describe_acls(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    refusal = (
        (ErrorCode.SECURITY_DISABLED, _DISABLED)
        if ctx.broker.authorizer is None
        else _refused(_cluster_denied(ctx, AclOperation.DESCRIBE))
    )
    if refusal is not None:
        return _describe_answer(*refusal, [])
    try:
        acl_filter = filter_from_body(body)
    except AclError as exc:
        return _describe_answer(ErrorCode.INVALID_REQUEST, str(exc), [])
    assert ctx.broker.authorizer is not None
    by_resource: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for b in ctx.broker.authorizer.describe(acl_filter):
        key = (int(b.resource_type), b.resource_name, int(b.pattern_type))
        by_resource.setdefault(key, []).append(
            {
                "principal": b.principal,
                "host": b.host,
                "operation": int(b.operation),
                "permission_type": int(b.permission),
            }
        )
    resources = [
        {"resource_type": t, "resource_name": n, "pattern_type": p, "acls": acls}
        for (t, n, p), acls in sorted(by_resource.items())
    ]
    return _describe_answer(0, None, resources)


async def handle_delete_acls(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    filters = body["filters"]
    refusal = (
        (ErrorCode.SECURITY_DISABLED, _DISABLED)
        if ctx.broker.authorizer is None
        else _refused(_cluster_denied(ctx, AclOperation.ALTER))
    )
    if refusal is not None:
        return {
            "throttle_time_ms": 0,
            "filter_results": [
                {"error_code": refusal[0], "error_message": refusal[1], "matching_acls": []}
                for _ in filters
            ],
        }
    parsed: list[AclFilter | str] = []
    for item in filters:
        try:
            parsed.append(filter_from_body(item))
        except AclError as exc:
            parsed.append(str(exc))
    valid = [f for f in parsed if isinstance(f, AclFilter)]
    assert ctx.broker.authorizer is not None
    try:
        removed = iter(await ctx.broker.authorizer.delete(valid))
    except AclWriteError as exc:
        return {
            "throttle_time_ms": 0,
            "filter_results": [
                {"error_code": exc.error_code, "error_message": str(exc), "matching_acls": []}
                for _ in filters
            ],
        }
    results = []
    for f in parsed:
        if isinstance(f, str):
            results.append(
                {"error_code": ErrorCode.INVALID_REQUEST, "error_message": f, "matching_acls": []}
            )
            continue
        results.append(
            {
                "error_code": 0,
                "error_message": None,
                "matching_acls": [matching_body(b) for b in next(removed)],
            }
        )
    return {"throttle_time_ms": 0, "filter_results": results}


def _refused(message: str | None) -> tuple[int, str] | None:
    return None if message is None else (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message)


def _result(code: int, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message}


def _describe_answer(code: int, message: str | None, resources: list[Any]) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "resources": resources,
    }
