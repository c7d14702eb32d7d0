"""CreateTopics, DeleteTopics, CreatePartitions and IncrementalAlterConfigs of topics on a
clustered broker: decided by the active controller.

Any broker takes the client's request and forwards it to the active controller
on the controller listener (as Kafka forwards admin requests to its KRaft
controller); the controller places the replicas over the unfenced brokers
(``default.replication.factor`` for -1) and refuses a replication factor larger
than the live brokers with INVALID_REPLICATION_FACTOR and a message naming
them. The client is answered once the change is in this broker's own metadata
image, so a Metadata request right after sees it. Topic configs are checked
here first (unknown keys or bad values: INVALID_CONFIG).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from log_engine.broker.cluster.channel import NOT_CONTROLLER
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode, InvalidConfigError
from log_engine.protocol import ApiKey
from log_engine.storage.config import LogConfig

if TYPE_CHECKING:
    from log_engine.broker.cluster.node import ClusterNode

log = logging.getLogger(__name__)

CREATE_TOPICS_VERSION = 4
DELETE_TOPICS_VERSION = 3
CREATE_PARTITIONS_VERSION = 1
INCREMENTAL_ALTER_CONFIGS_VERSION = 0
_CLUSTER_TOPIC_KEYS = frozenset({"unclean.leader.election.enable"})
_POLL_S = 0.01
Body = dict[str, Any]


def _any_not_controller(body: Body, key: str) -> bool:
    return any(t.get("error_code") == NOT_CONTROLLER for t in body.get(key, ()))


def config_error(configs: dict[str, str]) -> str | None:
    """Why a topic's configs are invalid (unknown keys, bad values), or None."""
    log_keys = {k: v for k, v in configs.items() if k not in _CLUSTER_TOPIC_KEYS}
    try:
        LogConfig.from_properties(log_keys)
    except (InvalidConfigError, ValueError) as exc:
        return f"invalid topic config: {getattr(exc, 'detail', exc)}"
    return None


async def create_topics(node: ClusterNode, body: Body, internal: bool = False) -> list[Body]:
    """The CreateTopics results (one per topic of ``body``); ``internal``: the broker's
    own request, which may create ``__consumer_offsets``."""
    timeout_ms = max(int(body.get("timeout_ms") or 30_000), 1000)
    results: dict[str, Body] = {}
    forward = []
    for topic in body["topics"]:
        name = topic["name"]
        configs = {c["name"]: c["value"] for c in topic["configs"] if c["value"] is not None}
        result = {
            "name": name,
            "error_code": 0,
            "error_message": None,
            "num_partitions": topic["num_partitions"],
            "replication_factor": topic["replication_factor"],
            "configs": [],
        }
        results[name] = result
        if name == OFFSETS_TOPIC and not internal:
            result.update(
                error_code=int(ErrorCode.INVALID_TOPIC_EXCEPTION),
                error_message=f"{OFFSETS_TOPIC} is internal: the brokers create it on the "
                "first FindCoordinator",
            )
            continue
        problem = config_error(configs)
        if problem is not None:
            result.update(error_code=int(ErrorCode.INVALID_CONFIG), error_message=problem)
            continue
        forward.append(
            {
                "name": name,
                "num_partitions": topic["num_partitions"],
                "replication_factor": topic["replication_factor"],
                "assignments": topic["assignments"],
                "configs": [{"name": k, "value": v} for k, v in configs.items()],
            }
        )
    if forward:
        request = {
            "topics": forward,
            "timeout_ms": timeout_ms,
            "validate_only": bool(body.get("validate_only")),
        }
        answer = await node.channel.send(
            ApiKey.CREATE_TOPICS,
            CREATE_TOPICS_VERSION,
            request,
            timeout_ms,
            retry_if=lambda b: _any_not_controller(b, "topics"),
        )
        created = []
        for entry in forward:
            outcome = _outcome(answer, "topics", entry["name"])
            results[entry["name"]].update(outcome)
            if outcome["error_code"] == 0 and not request["validate_only"]:
                created.append(entry["name"])
        await _wait_for(node, lambda: all(n in node.image.topics for n in created), timeout_ms)
        for name in created:
            topic = node.image.topics.get(name)
            if topic is not None:
                log.info("created topic %r with %d partitions", name, len(topic.partitions))
                results[name]["num_partitions"] = len(topic.partitions)
                first = topic.partitions.get(0)
                if first is not None:
                    results[name]["replication_factor"] = len(first.replicas)
    return list(results.values())


async def delete_topics(node: ClusterNode, body: Body) -> list[Body]:
    """The DeleteTopics results (one per name of ``body``)."""
    names = [n for n in body["topic_names"] if n != OFFSETS_TOPIC]
    timeout_ms = max(int(body.get("timeout_ms") or 30_000), 1000)
    internal = [
        {
            "name": OFFSETS_TOPIC,
            "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
            "error_message": f"{OFFSETS_TOPIC} is internal",
        }
        for n in body["topic_names"]
        if n == OFFSETS_TOPIC
    ]
    if not names:
        return internal
    answer = await node.channel.send(
        ApiKey.DELETE_TOPICS,
        DELETE_TOPICS_VERSION,
        {"topic_names": names, "timeout_ms": timeout_ms},
        timeout_ms,
        retry_if=lambda b: _any_not_controller(b, "responses"),
    )
    results = []
    deleted = []
    for name in names:
        outcome = _outcome(answer, "responses", name)
        results.append({"name": name, **outcome})
        if outcome["error_code"] == 0:
            deleted.append(name)
    await _wait_for(node, lambda: not any(n in node.image.topics for n in deleted), timeout_ms)
    return results + internal


async def create_partitions(node: ClusterNode, body: Body) -> list[Body]:
    """The CreatePartitions results (one per topic of ``body``), answered once this
    broker's image has the new partitions (``__consumer_offsets`` does not grow)."""
    timeout_ms = max(int(body.get("timeout_ms") or 30_000), 1000)
    validate_only = bool(body.get("validate_only"))
    results: dict[str, Body] = {}
    forward = []
    for topic in body["topics"]:
        name = topic["name"]
        if name == OFFSETS_TOPIC:
            results[name] = {
                "name": name,
                "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": f"{OFFSETS_TOPIC} is internal: its partitions cannot be added",
            }
            continue
        results[name] = {"name": name, "error_code": 0, "error_message": None}
        forward.append(
            {"name": name, "count": topic["count"], "assignments": topic["assignments"]}
        )
    if forward:
        answer = await node.channel.send(
            ApiKey.CREATE_PARTITIONS,
            CREATE_PARTITIONS_VERSION,
            {"topics": forward, "timeout_ms": timeout_ms, "validate_only": validate_only},
            timeout_ms,
            retry_if=lambda b: _any_not_controller(b, "results"),
        )
        grown = {}
        for entry in forward:
            outcome = _outcome(answer, "results", entry["name"])
            results[entry["name"]].update(outcome)
            if outcome["error_code"] == 0 and not validate_only:
                grown[entry["name"]] = entry["count"]

        def done() -> bool:
            return all(
                name in node.image.topics and len(node.image.topics[name].partitions) >= count
                for name, count in grown.items()
            )

        await _wait_for(node, done, timeout_ms)
        for name, count in grown.items():
            log.info("topic %r now has %d partitions", name, count)
    return list(results.values())


async def alter_topic_configs(
    node: ClusterNode, resources: list[Body], validate_only: bool
) -> dict[str, Body]:
    """IncrementalAlterConfigs of topics (checked by the caller) at the controller: per
    topic its error code and message, answered once this broker's image has the change."""
    timeout_ms = 30_000
    answer = await node.channel.send(
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        INCREMENTAL_ALTER_CONFIGS_VERSION,
        {
            "resources": [
                {"resource_type": r["resource_type"], "resource_name": r["resource_name"],
                 "configs": r["configs"]}
                for r in resources
            ],
            "validate_only": validate_only,
        },
        timeout_ms,
        retry_if=lambda b: _any_not_controller(b, "responses"),
    )
    outcomes: dict[str, Body] = {}
    for resource in resources:
        name = resource["resource_name"]
        outcome = {"error_code": int(ErrorCode.REQUEST_TIMED_OUT),
                   "error_message": "no active controller answered"}
        for entry in (answer or {}).get("responses", ()):
            if entry["resource_name"] == name:
                outcome = {"error_code": entry["error_code"],
                           "error_message": entry.get("error_message")}
        outcomes[name] = outcome
    if not validate_only:
        wanted = {
            r["resource_name"]: _expected(r)
            for r in resources
            if outcomes[r["resource_name"]]["error_code"] == 0
        }
        await _wait_for(
            node,
            lambda: all(
                all(node.image.topic_configs(n).get(k) == v for k, v in keys.items())
                for n, keys in wanted.items()
            ),
            timeout_ms,
        )
    return outcomes


def _expected(resource: Body) -> dict[str, str | None]:
    """The keys a committed change leaves: set values, deleted keys absent (None)."""
    return {
        c["name"]: c["value"] if c["config_operation"] == 0 else None
        for c in resource["configs"]
    }


def _outcome(answer: Body | None, key: str, name: str) -> Body:
    if answer is None:
        return {
            "error_code": int(ErrorCode.REQUEST_TIMED_OUT),
            "error_message": "no active controller answered",
        }
    for entry in answer.get(key, ()):
        if entry["name"] == name:
            return {
                "error_code": entry["error_code"],
                "error_message": entry.get("error_message"),
            }
    return {"error_code": int(ErrorCode.UNKNOWN_SERVER_ERROR), "error_message": "no answer"}


async def _wait_for(node: ClusterNode, done: Any, timeout_ms: int) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_ms / 1000
    while not done():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True
