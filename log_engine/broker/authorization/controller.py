"""Authorization on the controller listener: the operation Kafka's ControllerApis checks.

With ``authorizer.class.name`` set, every request a controller listener serves
(but ApiVersions) needs an operation on the cluster resource by the
connection's principal (its SASL user or ``User:CN=...`` certificate subject,
``User:ANONYMOUS`` on a PLAINTEXT controller listener):

- CLUSTER_ACTION: the quorum's Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch
  and FetchSnapshot; the brokers' BrokerRegistration, BrokerHeartbeat,
  AlterPartition and AllocateProducerIds; and the admin requests brokers
  forward for their clients (CreateTopics, DeleteTopics, CreatePartitions,
  IncrementalAlterConfigs, CreateAcls, DeleteAcls, AlterUserScramCredentials),
  which Kafka wraps in an Envelope whose sender needs CLUSTER_ACTION (the
  forwarding broker checked the client's own operations already);
- DESCRIBE: DescribeQuorum.

A refused request is answered CLUSTER_AUTHORIZATION_FAILED (31), changes
nothing, and is logged with the principal (once a minute for each principal and
API, with how many were not logged: a refused broker retries every heartbeat).
The nodes themselves log in as a principal in ``super.users`` (or one granted
CLUSTER_ACTION), as in Kafka.
"""

from __future__ import annotations

import logging
from typing import Any

from log_engine.acls import AclOperation
from log_engine.broker.authorization.checks import Handler, allowed_on_cluster
from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.security.scram_admin import cluster_refusal
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.replication.quorum.translate import error_response
from log_engine.throttled_log import ThrottledLog

log = logging.getLogger(__name__)
_refusals = ThrottledLog(log)

_DENIED = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)

_QUORUM = (
    ApiKey.VOTE,
    ApiKey.BEGIN_QUORUM_EPOCH,
    ApiKey.END_QUORUM_EPOCH,
    ApiKey.FETCH,
    ApiKey.FETCH_SNAPSHOT,
)
_BROKER = (
    ApiKey.BROKER_REGISTRATION,
    ApiKey.BROKER_HEARTBEAT,
    ApiKey.ALTER_PARTITION,
    ApiKey.ALLOCATE_PRODUCER_IDS,
)
_FORWARDED = (
    ApiKey.CREATE_TOPICS,
    ApiKey.DELETE_TOPICS,
    ApiKey.CREATE_PARTITIONS,
    ApiKey.INCREMENTAL_ALTER_CONFIGS,
    ApiKey.CREATE_ACLS,
    ApiKey.DELETE_ACLS,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
)

CONTROLLER_OPERATIONS: dict[ApiKey, AclOperation] = {
    **dict.fromkeys(_QUORUM + _BROKER + _FORWARDED, AclOperation.CLUSTER_ACTION),
    ApiKey.DESCRIBE_QUORUM: AclOperation.DESCRIBE,
}
"""The cluster operation each controller-listener API needs."""

CONTROLLER_UNGATED = frozenset({ApiKey.API_VERSIONS})
"""Served to anyone who got through the listener's authentication."""


def refusal(api_key: ApiKey, body: dict[str, Any], message: str) -> dict[str, Any]:
    """The answer to a refused request: CLUSTER_AUTHORIZATION_FAILED in the API's shape."""
    if api_key in _QUORUM:
        return error_response(api_key, _DENIED)
    if api_key == ApiKey.DESCRIBE_QUORUM:
        return {"error_code": _DENIED, "error_message": message, "topics": [], "nodes": []}
    if api_key == ApiKey.ALTER_PARTITION:
        return {"throttle_time_ms": 0, "error_code": _DENIED, "topics": []}
    if api_key in _BROKER:
        return {"throttle_time_ms": 0, "error_code": _DENIED}
    failed = {"error_code": _DENIED, "error_message": message}
    if api_key == ApiKey.CREATE_TOPICS:
        return {"throttle_time_ms": 0,
                "topics": [{"name": t["name"], **failed} for t in body["topics"]]}
    if api_key == ApiKey.DELETE_TOPICS:
        return {"throttle_time_ms": 0,
                "responses": [{"name": n, **failed} for n in body["topic_names"]]}
    if api_key == ApiKey.CREATE_PARTITIONS:
        return {"throttle_time_ms": 0,
                "results": [{"name": t["name"], **failed} for t in body["topics"]]}
    if api_key == ApiKey.INCREMENTAL_ALTER_CONFIGS:
        return {"throttle_time_ms": 0,
                "responses": [{**failed, "resource_type": r["resource_type"],
                               "resource_name": r["resource_name"]}
                              for r in body["resources"]]}
    if api_key == ApiKey.CREATE_ACLS:
        return {"throttle_time_ms": 0, "results": [failed for _ in body["creations"]]}
    if api_key == ApiKey.DELETE_ACLS:
        return {"throttle_time_ms": 0,
                "filter_results": [{**failed, "matching_acls": []} for _ in body["filters"]]}
    if api_key == ApiKey.ALTER_USER_SCRAM_CREDENTIALS:
        return cluster_refusal(api_key, body, message)
    raise AssertionError(f"no refusal for controller API {api_key!r}")  # fmt: skip


def _guarded(api_key: ApiKey, operation: AclOperation, handler: Handler) -> Handler:
    async def guarded(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
        if ctx.broker.authorizer is None or allowed_on_cluster(ctx, operation):
            return await handler(ctx, body)
        message = (
            f"Principal {ctx.principal} does not have required {operation.name} "
            f"on the cluster for {api_key.name}"
        )
        _refusals.warning(
            (ctx.principal, api_key),
            "controller listener: refused %s from %s: %s", api_key.name, ctx.peer, message,
        )  # fmt: skip
        return refusal(api_key, body, message)

    guarded.__name__ = f"guarded_{getattr(handler, '__name__', 'handler')}"
    return guarded


def guard_controller(handlers: dict[ApiKey, Handler]) -> dict[ApiKey, Handler]:
    """The controller listener's table with each API behind its cluster operation."""
    missing = set(handlers) - set(CONTROLLER_OPERATIONS) - CONTROLLER_UNGATED
    if missing:
        raise AssertionError(f"controller APIs with no authorization: {sorted(missing)}")
    return {
        api: handler
        if api in CONTROLLER_UNGATED
        else _guarded(api, CONTROLLER_OPERATIONS[api], handler)
        for api, handler in handlers.items()
    }
