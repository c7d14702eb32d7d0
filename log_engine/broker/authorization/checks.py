"""What every gate uses: the authorizer's answer for this request's principal."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from log_engine.acls import CLUSTER_NAME, AclOperation, ResourceType
from log_engine.broker.handlers.context import RequestContext

Handler = Callable[[RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | None]]
Gate = Callable[[RequestContext, dict[str, Any], Handler], Awaitable[dict[str, Any] | None]]
"""Checks a request, calls the handler with what is allowed, adds the refusals."""

T = TypeVar("T")

READ = AclOperation.READ
WRITE = AclOperation.WRITE
CREATE = AclOperation.CREATE
DELETE = AclOperation.DELETE
ALTER = AclOperation.ALTER
DESCRIBE = AclOperation.DESCRIBE
CLUSTER_ACTION = AclOperation.CLUSTER_ACTION
DESCRIBE_CONFIGS = AclOperation.DESCRIBE_CONFIGS
IDEMPOTENT_WRITE = AclOperation.IDEMPOTENT_WRITE
TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
CLUSTER = ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID


def allowed(
    ctx: RequestContext, operation: AclOperation, resource_type: ResourceType, name: str
) -> bool:
    """Whether the request's principal may do ``operation`` on the resource."""
    authorizer = ctx.broker.authorizer
    assert authorizer is not None, "gates run only with an authorizer"
    return authorizer.authorize(ctx.principal, ctx.client_host, operation, resource_type, name)


def allowed_on_cluster(ctx: RequestContext, operation: AclOperation) -> bool:
    return allowed(ctx, operation, CLUSTER, CLUSTER_NAME)


def may_create_topic(ctx: RequestContext, name: str) -> bool:
    """CREATE on the cluster, or on the topic (Kafka checks both)."""
    return allowed_on_cluster(ctx, CREATE) or allowed(ctx, CREATE, TOPIC, name)


def split(items: Iterable[T], keep: Callable[[T], bool]) -> tuple[list[T], list[T]]:
    """``(kept, refused)`` in their original order."""
    kept: list[T] = []
    refused: list[T] = []
    for item in items:
        (kept if keep(item) else refused).append(item)
    return kept, refused


def denied_message(ctx: RequestContext, operation: AclOperation, what: str) -> str:
    return f"{ctx.principal} is not authorized to {operation.name} {what}"
