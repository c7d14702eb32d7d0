"""The Metadata response of a clustered broker, from its metadata image.

Brokers: the unfenced ones, each with its endpoint on the listener the client
came in on (the broker listener). Topics: every partition's leader, leader
epoch, replicas and ISR as the controller last decided them;
LEADER_NOT_AVAILABLE for a partition without a live leader, whose replicas
that are not live are listed offline. An unknown topic asked for by name is
created through the controller when ``auto.create.topics.enable`` (with
``num.partitions`` and ``default.replication.factor``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from log_engine.broker.cluster import admin
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage

if TYPE_CHECKING:
    from log_engine.broker.cluster.node import ClusterNode
    from log_engine.broker.handlers.context import RequestContext

log = logging.getLogger(__name__)

Body = dict[str, Any]


async def metadata_response(ctx: RequestContext, node: ClusterNode, body: Body) -> Body:
    requested = body.get("topics")
    auto_create = body.get("allow_auto_topic_creation", True) and requested is not None
    if requested is None or (ctx.version == 0 and not requested):
        names = sorted(node.image.topics)
    else:
        names = [t["name"] for t in requested]
    missing = [n for n in names if n not in node.image.topics and n != OFFSETS_TOPIC]
    if missing and auto_create and ctx.broker.config.auto_create_topics_enable:
        await _auto_create(node, missing)
    image = node.image
    listener = ctx.listener_name
    brokers: list[Body] = []
    for broker_id in sorted(image.brokers):
        info = image.brokers[broker_id]
        endpoint = info.endpoint(listener)
        if info.fenced or endpoint is None:
            continue
        brokers.append(
            {"node_id": broker_id, "host": endpoint.host, "port": endpoint.port, "rack": info.rack}
        )
    live: set[int] = {b["node_id"] for b in brokers}
    controller = node.channel.controller_id
    if controller not in live:
        controller = min(live) if live else -1
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": ctx.broker.cluster_id,
        "controller_id": controller,
        "topics": [_topic(image, name, live) for name in names],
    }


def _topic(image: MetadataImage, name: str, live: set[int]) -> Body:
    topic = image.topics.get(name)
    if topic is None:
        return {
            "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            "name": name,
            "is_internal": False,
            "partitions": [],
        }
    partitions = []
    for index in sorted(topic.partitions):
        s = topic.partitions[index]
        led = s.has_leader and s.leader in live
        partitions.append(
            {
                "error_code": 0 if led else int(ErrorCode.LEADER_NOT_AVAILABLE),
                "partition_index": index,
                "leader_id": s.leader if led else -1,
                "leader_epoch": s.leader_epoch,
                "replica_nodes": list(s.replicas),
                "isr_nodes": list(s.isr),
                "offline_replicas": [r for r in s.replicas if r not in live],
            }
        )
    return {
        "error_code": 0,
        "name": name,
        "is_internal": name == OFFSETS_TOPIC,
        "partitions": partitions,
    }


async def _auto_create(node: ClusterNode, names: list[str]) -> None:
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": -1,
                "replication_factor": -1,
                "assignments": [],
                "configs": [],
            }
            for name in names
        ],
        "timeout_ms": 10_000,
        "validate_only": False,
    }
    for result in await admin.create_topics(node, body):
        if result["error_code"] and result["error_code"] != ErrorCode.TOPIC_ALREADY_EXISTS:
            log.info(
                "auto-creating topic %r failed: %s", result["name"], result["error_message"]
            )
