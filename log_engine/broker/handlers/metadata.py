"""ApiVersions and Metadata.

A single node answers with itself as every partition's leader; a clustered
broker answers from its metadata image (``cluster/metadata_answer.py``). Once the
replica manager has partition states (a cluster), Metadata lists the
cluster's unfenced brokers and each partition's leader, leader epoch,
replicas and ISR as the controller last decided them, so clients follow the
leader.
"""

from __future__ import annotations

import logging
from typing import Any

from log_engine.broker.cluster.metadata_answer import metadata_response
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
    if broker.cluster_node is not None:
        return await metadata_response(ctx, broker.cluster_node, body)
    requested = body.get("topics")
    if requested is None or (ctx.version == 0 and not requested):
        names = sorted(set(broker.topics.topics()) | {t for t, _ in broker.replicas.states})
    else:
        names = [t["name"] for t in requested]
    auto_create = body.get("allow_auto_topic_creation", True)
    topics = [_topic_metadata(ctx, name, auto_create and requested is not None) for name in names]
    return {
        "throttle_time_ms": 0,
        "brokers": _brokers(ctx),
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "topics": topics,
    }


def _brokers(ctx: RequestContext) -> list[dict[str, Any]]:
    broker = ctx.broker
    advertised = broker.advertised_on(ctx.listener_name)
    me = {"node_id": broker.node_id, "host": advertised.host, "port": advertised.port, "rack": None}
    if not broker.replicas.brokers:
        return [me]
    listener = ctx.listener_name
    out = []
    for info in sorted(broker.replicas.brokers.values(), key=lambda b: b.broker_id):
        endpoint = info.endpoint(listener)
        if info.broker_id == broker.node_id:
            out.append(me)
        elif endpoint is not None and not info.fenced:
            out.append(
                {
                    "node_id": info.broker_id,
                    "host": endpoint.host,
                    "port": endpoint.port,
                    "rack": info.rack,
                }
            )
    return out


def _replicated_topic(ctx: RequestContext, name: str) -> dict[str, Any] | None:
    states = sorted(
        (s for (t, _), s in ctx.broker.replicas.states.items() if t == name),
        key=lambda s: s.partition,
    )
    if not states:
        return None
    live = {b["node_id"] for b in _brokers(ctx)}
    partitions = [
        {
            "error_code": 0 if s.has_leader else ErrorCode.LEADER_NOT_AVAILABLE,
            "partition_index": s.partition,
            "leader_id": s.leader,
            "leader_epoch": s.leader_epoch,
            "replica_nodes": list(s.replicas),
            "isr_nodes": list(s.isr),
            "offline_replicas": [r for r in s.replicas if r not in live],
        }
        for s in states
    ]
    return {
        "error_code": 0,
        "name": name,
        "is_internal": name == OFFSETS_TOPIC,
        "partitions": partitions,
    }


def _topic_metadata(ctx: RequestContext, name: str, may_create: bool) -> dict[str, Any]:
    broker = ctx.broker
    replicated = _replicated_topic(ctx, name) if broker.replicas.states else None
    if replicated is not None:
        return replicated
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
