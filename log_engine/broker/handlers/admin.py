"""Topic administration: CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs,
DeleteRecords.

On a clustered broker CreateTopics, DeleteTopics and CreatePartitions go to the
active controller (``cluster/admin.py``); DeleteRecords is served by each
partition's leader only (others answer NOT_LEADER_OR_FOLLOWER) and followers
take the leader's log start offset from their fetches."""

from __future__ import annotations

import logging
from typing import Any

from log_engine.broker.cluster import admin as cluster_admin
from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.topics import OFFSETS_TOPIC, TopicError, TopicSpec
from log_engine.errors import ErrorCode, KafkaError
from log_engine.storage.config import LogConfig

log = logging.getLogger(__name__)

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5


async def handle_create_topics(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.broker.cluster_node is not None:
        topics = await cluster_admin.create_topics(ctx.broker.cluster_node, body)
        return {"throttle_time_ms": 0, "topics": topics}
    config = ctx.broker.config
    results = []
    for topic in body["topics"]:
        name = topic["name"]
        partitions = topic["num_partitions"]
        replication = topic["replication_factor"]
        spec = TopicSpec(
            name,
            config.num_partitions if partitions == -1 else partitions,
            config.default_replication_factor if replication == -1 else replication,
            {c["name"]: c["value"] for c in topic["configs"] if c["value"] is not None},
        )
        result = {
            "name": name,
            "error_code": 0,
            "error_message": None,
            "num_partitions": spec.num_partitions,
            "replication_factor": spec.replication_factor,
            "configs": [],
        }
        try:
            if topic["assignments"]:
                raise TopicError(
                    ErrorCode.INVALID_REQUEST, "manual replica assignments are not supported"
                )
            if body.get("validate_only"):
                ctx.broker.topics.check_create(spec)
            else:
                ctx.broker.topics.create(spec)
                log.info("created topic %r with %d partitions", name, spec.num_partitions)
        except TopicError as exc:
            result.update(error_code=exc.error_code, error_message=exc.message)
        results.append(result)
    return {"throttle_time_ms": 0, "topics": results}


async def handle_delete_topics(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.broker.cluster_node is not None:
        responses = await cluster_admin.delete_topics(ctx.broker.cluster_node, body)
        return {"throttle_time_ms": 0, "responses": responses}
    responses = []
    for name in body["topic_names"]:
        result = {"name": name, "error_code": 0, "error_message": None}
        try:
            if name == OFFSETS_TOPIC:
                raise TopicError(
                    ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"{OFFSETS_TOPIC} is internal"
                )
            ctx.broker.topics.delete(name)
            log.info("deleted topic %r", name)
        except TopicError as exc:
            result.update(error_code=exc.error_code, error_message=exc.message)
        responses.append(result)
    return {"throttle_time_ms": 0, "responses": responses}


async def handle_create_partitions(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.broker.cluster_node is not None:
        results = await cluster_admin.create_partitions(ctx.broker.cluster_node, body)
        return {"throttle_time_ms": 0, "results": results}
    results = []
    for topic in body["topics"]:
        result = {"name": topic["name"], "error_code": 0, "error_message": None}
        try:
            ctx.broker.topics.add_partitions(topic["name"], topic["count"], body["validate_only"])
        except TopicError as exc:
            result.update(error_code=exc.error_code, error_message=exc.message)
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


async def handle_describe_configs(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    results = []
    for resource in body["resources"]:
        kind, name = resource["resource_type"], resource["resource_name"]
        result = {
            "error_code": 0,
            "error_message": None,
            "resource_type": kind,
            "resource_name": name,
            "configs": [],
        }
        node = ctx.broker.cluster_node
        if kind == RESOURCE_TOPIC and node is not None and name in node.image.topics:
            entries = _cluster_topic_entries(ctx, dict(node.image.topic_configs(name)))
        elif kind == RESOURCE_TOPIC and ctx.broker.topics.exists(name):
            entries = _topic_entries(ctx, name)
        elif kind == RESOURCE_BROKER:
            entries = _broker_entries(ctx)
        else:
            result.update(
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                error_message=f"unknown resource {name!r}",
            )
            results.append(result)
            continue
        keys = resource["configuration_keys"]
        result["configs"] = [e for e in entries if keys is None or e["name"] in keys]
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


def _topic_entries(ctx: RequestContext, topic: str) -> list[dict[str, Any]]:
    logs = ctx.broker.logs
    overrides = logs.topic_overrides(topic)
    values = logs.topic_config(topic).to_properties()
    return [
        _entry(key, value, SOURCE_DYNAMIC_TOPIC if key in overrides else SOURCE_DEFAULT)
        for key, value in sorted(values.items())
    ]


def _cluster_topic_entries(ctx: RequestContext, configs: dict[str, str | None]) -> list[Any]:
    """A clustered topic's configs from the metadata image (this broker may host none of
    its replicas): the broker's defaults with the topic's keys over them."""
    overrides = {k: v for k, v in configs.items() if v is not None}
    log_keys = LogConfig.keys()
    defaults = LogConfig.from_properties(ctx.broker.config.default_topic_properties())
    values = defaults.with_overrides({k: v for k, v in overrides.items() if k in log_keys})
    merged = {**values.to_properties(), **overrides}
    return [
        _entry(key, value, SOURCE_DYNAMIC_TOPIC if key in overrides else SOURCE_DEFAULT)
        for key, value in sorted(merged.items())
    ]


def _broker_entries(ctx: RequestContext) -> list[dict[str, Any]]:
    config = ctx.broker.config
    values = config.model_dump(by_alias=True, exclude={"log_settings"})
    return [
        _entry(
            key,
            "" if value is None else str(value).lower() if isinstance(value, bool) else str(value),
            SOURCE_STATIC_BROKER,
        )
        for key, value in sorted(values.items())
    ]


def _entry(name: str, value: str, source: int) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "read_only": False,
        "is_default": source == SOURCE_DEFAULT,
        "config_source": source,
        "is_sensitive": False,
        "synonyms": [],
    }


async def handle_delete_records(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for topic in body["topics"]:
        results = [_delete_records(ctx, topic["name"], p) for p in topic["partitions"]]
        topics.append({"name": topic["name"], "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


def _delete_records(ctx: RequestContext, topic: str, request: dict[str, Any]) -> dict[str, Any]:
    """One partition's DeleteRecords: the leader moves its log start offset (at most to
    the high watermark); in a cluster the followers take it from their next fetch."""
    index = request["partition_index"]
    result = {"partition_index": index, "low_watermark": -1, "error_code": 0}
    partition = ctx.broker.topics.partition(topic, index)
    if partition is None:
        elsewhere = ctx.broker.replicas.hosts_elsewhere(topic, index)
        result["error_code"] = (
            ErrorCode.NOT_LEADER_OR_FOLLOWER if elsewhere else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
        return result
    error = partition.leader_error()
    if error:
        result["error_code"] = error
        return result
    high_watermark = partition.high_watermark
    offset = high_watermark if request["offset"] == -1 else request["offset"]
    if not 0 <= offset <= high_watermark:
        result["error_code"] = ErrorCode.OFFSET_OUT_OF_RANGE
        return result
    try:
        result["low_watermark"] = partition.log.delete_records_before(offset)
    except KafkaError as exc:
        result["error_code"] = exc.errno
    return result
