"""ApiVersions and Metadata."""

from __future__ import annotations

import logging
from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.topics import OFFSETS_TOPIC, TopicError, TopicSpec, validate_topic_name
from log_engine.errors import ErrorCode
from log_engine.protocol import SUPPORTED_VERSIONS

log = logging.getLogger(__name__)


async def handle_api_versions(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    keys = [
        {"api_key": int(key), "min_version": low, "max_version": high}
        for key, (low, high) in sorted(SUPPORTED_VERSIONS.items())
    ]
    return {"error_code": 0, "api_keys": keys, "throttle_time_ms": 0}


async def handle_metadata(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    broker = ctx.broker
    requested = body.get("topics")
    if requested is None or (ctx.version == 0 and not requested):
        names = sorted(broker.topics.topics())  # all topics
    else:
        names = [t["name"] for t in requested]
    auto_create = body.get("allow_auto_topic_creation", True)
    topics = [_topic_metadata(ctx, name, auto_create and requested is not None) for name in names]
    advertised = broker.advertised
    return {
        "throttle_time_ms": 0,
        "brokers": [
            {
                "node_id": broker.node_id,
                "host": advertised.host,
                "port": advertised.port,
                "rack": None,
            }
        ],
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "topics": topics,
    }


def _topic_metadata(ctx: RequestContext, name: str, may_create: bool) -> dict[str, Any]:
    broker = ctx.broker
    if not broker.topics.exists(name):
        error = (
            _maybe_auto_create(ctx, name) if may_create else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
        if error:
            return {"error_code": error, "name": name, "is_internal": False, "partitions": []}
    node = broker.node_id
    partitions = [
        {
            "error_code": 0,
            "partition_index": p.index,
            "leader_id": node,
            "leader_epoch": 0,
            "replica_nodes": [node],
            "isr_nodes": [node],
            "offline_replicas": [],
        }
        for p in broker.topics.partitions(name)
    ]
    return {
        "error_code": 0,
        "name": name,
        "is_internal": name == OFFSETS_TOPIC,
        "partitions": partitions,
    }


def _maybe_auto_create(ctx: RequestContext, name: str) -> int:
    config = ctx.broker.config
    if not config.auto_create_topics_enable:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    try:
        validate_topic_name(name)
        spec = TopicSpec(name, config.num_partitions, config.default_replication_factor, {})
        ctx.broker.topics.create(spec)
    except TopicError as exc:
        log.info("auto-creating topic %r failed: %s", name, exc.message)
        return exc.error_code
    log.info("auto-created topic %r with %d partitions", name, config.num_partitions)
    return 0
