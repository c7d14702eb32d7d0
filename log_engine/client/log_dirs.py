"""DescribeLogDirs for the admin client: each broker's log directories and the bytes each
partition replica takes in them (what ``kafka-log-dirs.sh --describe`` shows)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from log_engine.client import errors
from log_engine.client.types import TopicPartition
from log_engine.protocol import ApiKey

Send = Callable[[int, ApiKey, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """One partition replica in a log directory."""

    size_bytes: int
    offset_lag: int  # how far its log end is behind the high watermark (0 on a leader)
    is_future: bool  # being moved here from another directory


@dataclass(frozen=True, slots=True)
class LogDirDescription:
    """One log directory of one broker."""

    path: str
    replicas: dict[TopicPartition, ReplicaInfo] = field(default_factory=dict)
    total_bytes: int = -1  # the file system's (-1: the broker did not say)
    usable_bytes: int = -1


async def describe_log_dirs(
    send_to: Send, broker_ids: Iterable[int], topics: Iterable[str] | None = None
) -> dict[int, list[LogDirDescription]]:
    """Per broker id, its log directories; ``topics`` limits the replicas listed (the
    brokers are asked for every partition and the answer filtered, so no metadata of
    partition counts is needed)."""
    wanted = None if topics is None else set(topics)
    out: dict[int, list[LogDirDescription]] = {}
    for broker_id in broker_ids:
        response = await send_to(broker_id, ApiKey.DESCRIBE_LOG_DIRS, {"topics": None})
        errors.check_error(response.get("error_code", 0), f"DescribeLogDirs on broker {broker_id}")
        dirs = []
        for result in response["results"]:
            errors.check_error(result["error_code"], f"log dir {result['log_dir']} of {broker_id}")
            replicas = {
                TopicPartition(topic["name"], p["partition_index"]): ReplicaInfo(
                    p["partition_size"], p["offset_lag"], p["is_future_key"]
                )
                for topic in result["topics"]
                if wanted is None or topic["name"] in wanted
                for p in topic["partitions"]
            }
            dirs.append(LogDirDescription(
                result["log_dir"], replicas,
                result.get("total_bytes", -1), result.get("usable_bytes", -1),
            ))
        out[broker_id] = dirs
    return out
