"""Gates of the admin and producer-id APIs.

- CreateTopics: CREATE on the cluster or the topic; DeleteTopics: DELETE on
  the topic; CreatePartitions: ALTER on the topic; DeleteRecords: DELETE on
  the topic (TOPIC_AUTHORIZATION_FAILED per topic or partition).
- DescribeConfigs: DESCRIBE_CONFIGS on the topic, or on the cluster for a
  broker resource (TOPIC_/CLUSTER_AUTHORIZATION_FAILED per resource);
  IncrementalAlterConfigs the same with ALTER_CONFIGS.
- InitProducerId: WRITE on the transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without one, IDEMPOTENT_WRITE on
  the cluster or WRITE on some topic (KIP-679; CLUSTER_AUTHORIZATION_FAILED).
- DescribeUserScramCredentials / AlterUserScramCredentials: DESCRIBE / ALTER
  on the cluster (CLUSTER_AUTHORIZATION_FAILED for every user).
- DescribeLogDirs: DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED and no
  log dirs otherwise).
"""

from __future__ import annotations

from typing import Any

from log_engine.acls import AclOperation
from log_engine.broker.authorization.checks import (
    ALTER,
    DELETE,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    IDEMPOTENT_WRITE,
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
from log_engine.broker.security.scram_admin import cluster_refusal
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

_TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
_TOPIC_RESOURCE = 2


async def create_topics(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused = split(body["topics"], lambda t: may_create_topic(ctx, t["name"]))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topics": kept})
    assert response is not None
    response["topics"].extend(
        {"name": t["name"], "error_code": _TOPIC_DENIED,
         "error_message": denied_message(ctx, AclOperation.CREATE, "this topic")}
        for t in refused
    )
    return response


async def delete_topics(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused = split(body["topic_names"], lambda name: allowed(ctx, DELETE, TOPIC, name))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topic_names": kept})
    assert response is not None
    response["responses"].extend(
        {"name": name, "error_code": _TOPIC_DENIED,
         "error_message": denied_message(ctx, DELETE, "this topic")}
        for name in refused
    )
    return response


async def create_partitions(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused = split(body["topics"], lambda t: allowed(ctx, ALTER, TOPIC, t["name"]))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topics": kept})
    assert response is not None
    response["results"].extend(
        {"name": t["name"], "error_code": _TOPIC_DENIED,
         "error_message": denied_message(ctx, ALTER, "this topic")}
        for t in refused
    )
    return response


async def delete_records(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    kept, refused = split(body["topics"], lambda t: allowed(ctx, DELETE, TOPIC, t["name"]))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "topics": kept})
    assert response is not None
    response["topics"].extend(
        {
            "name": t["name"],
            "partitions": [
                {"partition_index": p["partition_index"], "low_watermark": -1,
                 "error_code": _TOPIC_DENIED}
                for p in t["partitions"]
            ],
        }
        for t in refused
    )
    return response


def _may_on_config_resource(
    ctx: RequestContext, operation: AclOperation, resource: dict[str, Any]
) -> bool:
    if resource["resource_type"] == _TOPIC_RESOURCE:
        return allowed(ctx, operation, TOPIC, resource["resource_name"])
    return allowed_on_cluster(ctx, operation)


async def _config_resources_gate(
    ctx: RequestContext,
    body: dict[str, Any],
    handler: Handler,
    operation: AclOperation,
    answers: str,
    **refusal_fields: Any,
) -> Any:
    """DescribeConfigs and IncrementalAlterConfigs: ``operation`` on each topic (on the
    cluster for broker resources); refused resources are answered in ``answers``."""
    kept, refused = split(body["resources"], lambda r: _may_on_config_resource(ctx, operation, r))
    if not refused:
        return await handler(ctx, body)
    response = await handler(ctx, {**body, "resources": kept})
    assert response is not None
    response[answers].extend(
        {
            "error_code": _TOPIC_DENIED
            if r["resource_type"] == _TOPIC_RESOURCE
            else ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            "error_message": denied_message(ctx, operation, "this resource"),
            "resource_type": r["resource_type"],
            "resource_name": r["resource_name"],
            **refusal_fields,
        }
        for r in refused
    )
    return response


async def incremental_alter_configs(
    ctx: RequestContext, body: dict[str, Any], handler: Handler
) -> Any:
    return await _config_resources_gate(ctx, body, handler, AclOperation.ALTER_CONFIGS, "responses")


async def describe_configs(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    return await _config_resources_gate(ctx, body, handler, DESCRIBE_CONFIGS, "results", configs=[])


async def init_producer_id(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    transactional_id = body.get("transactional_id")
    if transactional_id is not None:
        if allowed(ctx, WRITE, TRANSACTIONAL_ID, transactional_id):
            return await handler(ctx, body)
        code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        authorizer = ctx.broker.authorizer
        assert authorizer is not None
        if allowed_on_cluster(ctx, IDEMPOTENT_WRITE) or authorizer.authorize_any(
            ctx.principal, ctx.client_host, WRITE, TOPIC
        ):
            return await handler(ctx, body)
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}


def _scram(operation: AclOperation) -> Gate:
    async def gate(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
        if allowed_on_cluster(ctx, operation):
            return await handler(ctx, body)
        return cluster_refusal(
            ctx.header.api_key, body, denied_message(ctx, operation, "the cluster")
        )

    return gate


async def describe_log_dirs(ctx: RequestContext, body: dict[str, Any], handler: Handler) -> Any:
    if allowed_on_cluster(ctx, DESCRIBE):
        return await handler(ctx, body)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        "results": [],
    }


GATES: dict[ApiKey, Gate] = {
    ApiKey.CREATE_TOPICS: create_topics,
    ApiKey.DESCRIBE_LOG_DIRS: describe_log_dirs,
    ApiKey.DELETE_TOPICS: delete_topics,
    ApiKey.CREATE_PARTITIONS: create_partitions,
    ApiKey.DELETE_RECORDS: delete_records,
    ApiKey.DESCRIBE_CONFIGS: describe_configs,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: incremental_alter_configs,
    ApiKey.INIT_PRODUCER_ID: init_producer_id,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: _scram(DESCRIBE),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: _scram(ALTER),
}
