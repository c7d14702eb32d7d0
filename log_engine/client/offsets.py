"""Offset requests shared by the consumer and the admin client.

- :func:`list_offsets`: ListOffsets to each partition's leader, for the
  earliest (-2) or latest (-1) offset or the first offset at or after a
  timestamp, retrying while leadership moves.
- :func:`fetch_committed` / :func:`commit_offsets`: OffsetFetch and
  OffsetCommit to a group coordinator. A commit outside an active membership
  (manual assignment, admin resets) uses generation -1 and an empty member id.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from log_engine.client import errors
from log_engine.client.cluster import Cluster
from log_engine.client.connection import BrokerConnection
from log_engine.client.types import OffsetAndMetadata, TopicPartition
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

EARLIEST = -2
LATEST = -1
_ATTEMPTS_MAX = 20


def group_by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Partitions per topic, in first-seen order."""
    out: dict[str, list[int]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


async def list_offsets(
    cluster: Cluster,
    specs: Mapping[TopicPartition, int],
    *,
    isolation_level: int = 0,
    backoff_ms: int = 100,
) -> dict[TopicPartition, tuple[int, int]]:
    """``(offset, timestamp)`` per partition for each spec (EARLIEST, LATEST or a timestamp).

    The offset is -1 when no record has a timestamp at or after the one asked.
    """
    result: dict[TopicPartition, tuple[int, int]] = {}
    pending = dict(specs)
    cluster.add_topics({tp.topic for tp in pending} - cluster.interest)
    for _ in range(_ATTEMPTS_MAX):
        if not pending:
            return result
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        for tp, spec in pending.items():
            by_leader.setdefault(cluster.metadata.leader(tp), {})[tp] = spec
        retry_error: errors.KafkaError | None = None
        for leader, part_specs in by_leader.items():
            try:
                if leader < 0:
                    raise errors.kafka_error(
                        ErrorCode.LEADER_NOT_AVAILABLE, f"no leader known for {sorted(part_specs)}"
                    )
                conn = await cluster.connection(leader)
                answers = await _list_offsets_from(conn, part_specs, isolation_level)
            except errors.KafkaError as exc:
                if not exc.retriable:
                    raise
                retry_error = exc
                continue
            for tp, (code, offset, timestamp) in answers.items():
                if code == ErrorCode.NONE:
                    result[tp] = (offset, timestamp)
                    pending.pop(tp, None)
                elif errors.error_for_code(code).retriable:
                    retry_error = errors.kafka_error(code, f"ListOffsets for {tp}")
                else:
                    errors.check_error(code, f"ListOffsets for {tp}")
        if pending:
            await asyncio.sleep(backoff_ms / 1000)
            await cluster.refresh({tp.topic for tp in pending})
    raise retry_error or errors.timeout_error(f"ListOffsets for {sorted(pending)} kept failing")


async def _list_offsets_from(
    conn: BrokerConnection, specs: Mapping[TopicPartition, int], isolation_level: int
) -> dict[TopicPartition, tuple[int, int, int]]:
    topics: dict[str, list[dict[str, int]]] = {}
    for tp, spec in specs.items():
        topics.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "current_leader_epoch": -1, "timestamp": spec}
        )
    body = {
        "replica_id": -1,
        "isolation_level": isolation_level,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
    }
    response = await conn.send(ApiKey.LIST_OFFSETS, body)
    out: dict[TopicPartition, tuple[int, int, int]] = {}
    for topic in response["topics"]:
        for part in topic["partitions"]:
            tp = TopicPartition(topic["name"], part["partition_index"])
            out[tp] = (part["error_code"], part["offset"], part["timestamp"])
    missing = set(specs) - set(out)
    if missing:
        raise errors.network_error(f"ListOffsets answer left out {sorted(missing)}")
    return out


async def fetch_committed(
    conn: BrokerConnection, group_id: str, tps: Iterable[TopicPartition] | None
) -> dict[TopicPartition, OffsetAndMetadata | None]:
    """The committed offsets of ``group_id`` (every partition it has when ``tps`` is None)."""
    wanted = None if tps is None else list(tps)
    topics = (
        None
        if wanted is None
        else [{"name": t, "partition_indexes": ps} for t, ps in group_by_topic(wanted).items()]
    )
    body = {
        "group_id": group_id,  # v0-7
        "topics": topics,
        "groups": [{"group_id": group_id, "topics": topics}],  # v8+: a batch of groups
    }
    response = await conn.send(ApiKey.OFFSET_FETCH, body)
    if response["groups"]:  # v8+: the answer for our one group
        response = response["groups"][0]
    errors.check_error(response.get("error_code", 0), f"OffsetFetch for group {group_id}")
    out: dict[TopicPartition, OffsetAndMetadata | None] = dict.fromkeys(wanted or ())
    for topic in response["topics"]:
        for part in topic["partitions"]:
            tp = TopicPartition(topic["name"], part["partition_index"])
            errors.check_error(part["error_code"], f"OffsetFetch for {tp} in group {group_id}")
            offset = part["committed_offset"]
            out[tp] = OffsetAndMetadata(offset, part.get("metadata") or "") if offset >= 0 else None
    return out


async def commit_offsets(
    conn: BrokerConnection,
    group_id: str,
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
    *,
    generation: int = -1,
    member_id: str = "",
    group_instance_id: str | None = None,
) -> None:
    """Commit ``offsets`` for ``group_id``; raise the first partition error."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, committed in offsets.items():
        topics.setdefault(tp.topic, []).append(
            {
                "partition_index": tp.partition,
                "committed_offset": committed.offset,
                "committed_leader_epoch": -1,
                "committed_metadata": committed.metadata,
            }
        )
    body = {
        "group_id": group_id,
        "generation_id_or_member_epoch": generation,
        "member_id": member_id,
        "group_instance_id": group_instance_id,
        "retention_time_ms": -1,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
    }
    response = await conn.send(ApiKey.OFFSET_COMMIT, body)
    for topic in response["topics"]:
        for part in topic["partitions"]:
            errors.check_error(
                part["error_code"],
                f"OffsetCommit for {topic['name']}-{part['partition_index']} in group {group_id}",
            )
