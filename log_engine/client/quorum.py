"""DescribeQuorum (api 55) from a controller listener: who leads the metadata quorum.

:func:`describe_quorum` asks the controller at ``host:port``; a controller that
does not lead answers NOT_LEADER_OR_FOLLOWER with the leader it knows and every
voter's endpoint, and the question is asked again at the leader (at most once per
voter). The answer is a :class:`QuorumDescription` (what ``sluice cluster
status`` prints).
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

from log_engine.client import errors
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

METADATA_TOPIC = "__cluster_metadata"
DESCRIBE_QUORUM_VERSION = 2
"""Sent at a fixed version: controller APIs are not in ``CLIENT_VERSIONS``."""


@dataclass(frozen=True, slots=True)
class ReplicaLag:
    """One voter or observer as the leader sees it."""

    node_id: int
    log_end_offset: int
    lag: int
    last_fetch_timestamp: int


@dataclass(frozen=True, slots=True)
class QuorumDescription:
    """The quorum's state from the leader's point of view."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaLag, ...]
    observers: tuple[ReplicaLag, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def describe_quorum(host: str, port: int, timeout_ms: int = 10_000) -> QuorumDescription:
    """Ask the controller at ``host:port`` (then the leader it names) for the quorum's state."""
    asked: set[tuple[str, int]] = set()
    config = ClientConfig.from_mapping(
        {"bootstrap.servers": [f"{host}:{port}"], "request.timeout.ms": timeout_ms}
    )
    while True:
        asked.add((host, port))
        connection = await BrokerConnection.open(host, port, config)
        try:
            body = await connection.send(
                ApiKey.DESCRIBE_QUORUM,
                {
                    "topics": [
                        {"topic_name": METADATA_TOPIC, "partitions": [{"partition_index": 0}]}
                    ]
                },
                version=DESCRIBE_QUORUM_VERSION,
            )
        finally:
            connection.close()
        errors.check_error(body["error_code"], f"DescribeQuorum to {host}:{port}")
        (partition,) = body["topics"][0]["partitions"]
        code = partition["error_code"]
        if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
            leader = _endpoint(body.get("nodes", []), partition["leader_id"])
            if leader is None or leader in asked:
                errors.check_error(
                    code,
                    f"{host}:{port} does not lead the quorum and names no reachable leader "
                    f"(leader id {partition['leader_id']}, epoch {partition['leader_epoch']})",
                )
            assert leader is not None
            host, port = leader
            continue
        errors.check_error(code, f"DescribeQuorum to {host}:{port}")
        return _description(partition)


def describe_quorum_sync(host: str, port: int, timeout_ms: int = 10_000) -> QuorumDescription:
    """:func:`describe_quorum` for synchronous callers (the CLI)."""
    return asyncio.run(describe_quorum(host, port, timeout_ms))


def _endpoint(nodes: list[dict[str, Any]], node_id: int) -> tuple[str, int] | None:
    for node in nodes:
        if node["node_id"] == node_id and node["listeners"]:
            listener = node["listeners"][0]
            return listener["host"], listener["port"]
    return None


def _description(partition: dict[str, Any]) -> QuorumDescription:
    high_watermark = partition["high_watermark"]

    def replicas(key: str) -> tuple[ReplicaLag, ...]:
        return tuple(
            ReplicaLag(
                r["replica_id"],
                r["log_end_offset"],
                max(0, high_watermark - r["log_end_offset"]),
                r["last_fetch_timestamp"],
            )
            for r in sorted(partition[key], key=lambda r: r["replica_id"])
        )

    return QuorumDescription(
        partition["leader_id"],
        partition["leader_epoch"],
        high_watermark,
        replicas("current_voters"),
        replicas("observers"),
    )
