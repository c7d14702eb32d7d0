"""The Raft core's messages <-> Kafka's KRaft request and response bodies.

Requests: :func:`request_to_wire` gives the api key, version and body a node sends;
:func:`request_from_wire` turns a received body back into the core's request (the
sender comes from the body: candidate id, leader id, replica id).
Responses: :func:`response_to_wire` encodes the core's answer for the request that
asked; :func:`response_from_wire` decodes a peer's answer given the request we
sent (the wire does not repeat what the asker already knows: a Vote response's
pre-vote flag, a Fetch response's fetch offset).

Every body names ``__cluster_metadata`` partition 0 (Fetch v13+ by its fixed topic
id) and carries the cluster id; :class:`WireError` covers what the core never sees:
another cluster, another topic, a malformed body.
"""

from __future__ import annotations

import uuid
from typing import Any

from log_engine.errors import ErrorCode
from log_engine.protocol.versions import ApiKey
from log_engine.replication.quorum.records import decode_entries, encode_entries
from log_engine.replication.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftRequest,
    RaftResponse,
    VoteRequest,
    VoteResponse,
)
from log_engine.replication.raft.types import NO_NODE, NodeId, OffsetAndEpoch

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)
"""KRaft's fixed topic id of ``__cluster_metadata`` (Kafka's ``Uuid.METADATA_TOPIC_ID``)."""
METADATA_PARTITION = 0

INVALID_REQUEST = 42
INCONSISTENT_VOTER_SET = 94
INCONSISTENT_CLUSTER_ID = 104
INVALID_VOTER_KEY = 125
UNKNOWN_TOPIC_OR_PARTITION = 3

SEND_VERSIONS = {
    ApiKey.VOTE: 2,
    ApiKey.BEGIN_QUORUM_EPOCH: 1,
    ApiKey.END_QUORUM_EPOCH: 1,
    ApiKey.FETCH: 17,
    ApiKey.FETCH_SNAPSHOT: 1,
}
"""The version each quorum request is sent at (the newest this codebase declares)."""

_NO_UUID = uuid.UUID(int=0)


class WireError(Exception):
    """A request the core must not see; ``error_code`` is the Kafka error to answer with."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code


def api_key_of(message: RaftRequest) -> ApiKey:
    """The Kafka api a request travels as."""
    return _API_KEYS[type(message)]


_API_KEYS: dict[type, ApiKey] = {
    VoteRequest: ApiKey.VOTE,
    BeginQuorumEpochRequest: ApiKey.BEGIN_QUORUM_EPOCH,
    EndQuorumEpochRequest: ApiKey.END_QUORUM_EPOCH,
    FetchRequest: ApiKey.FETCH,
    FetchSnapshotRequest: ApiKey.FETCH_SNAPSHOT,
}
RESPONSE_TYPES: dict[type, type] = {
    VoteRequest: VoteResponse,
    BeginQuorumEpochRequest: BeginQuorumEpochResponse,
    EndQuorumEpochRequest: EndQuorumEpochResponse,
    FetchRequest: FetchResponse,
    FetchSnapshotRequest: FetchSnapshotResponse,
}
"""Which core response answers which core request."""


def _leader(node: NodeId | None) -> int:
    return NO_NODE if node is None else node


def _node(wire: int) -> NodeId | None:
    return None if wire < 0 else wire


def _code(value: int) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        raise WireError(value, f"error {value} from a peer") from None


def _partition(topics: list[dict[str, Any]], name_key: str = "topic_name") -> dict[str, Any]:
    """The one ``__cluster_metadata-0`` entry of a topics list."""
    for topic in topics:
        named = topic.get(name_key) == METADATA_TOPIC or topic.get("topic_id") == METADATA_TOPIC_ID
        if not named:
            continue
        for partition in topic["partitions"]:
            index = partition.get(
                "partition_index", partition.get("partition", partition.get("index"))
            )
            if index == METADATA_PARTITION:
                return partition
    raise WireError(UNKNOWN_TOPIC_OR_PARTITION, f"no {METADATA_TOPIC}-0 in the request")


# ---- requests -------------------------------------------------------------------


def request_to_wire(
    message: RaftRequest, cluster_id: str, fetch_max_bytes: int
) -> tuple[ApiKey, int, dict[str, Any]]:
    """The api key, version and body that carry ``message``."""
    key = api_key_of(message)
    version = SEND_VERSIONS[key]
    topic = METADATA_TOPIC
    if isinstance(message, VoteRequest):
        last = message.last_offset_and_epoch
        partition = {
            "partition_index": METADATA_PARTITION,
            "candidate_epoch": message.epoch,
            "candidate_id": message.sender,
            "candidate_directory_id": _NO_UUID,
            "voter_directory_id": _NO_UUID,
            "last_offset_epoch": last.epoch,
            "last_offset": last.offset,
            "pre_vote": message.pre_vote,
        }
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.receiver,
            "topics": [{"topic_name": topic, "partitions": [partition]}],
        }
    elif isinstance(message, BeginQuorumEpochRequest):
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.receiver,
            "topics": [
                {
                    "topic_name": topic,
                    "partitions": [
                        {
                            "partition_index": METADATA_PARTITION,
                            "voter_directory_id": _NO_UUID,
                            "leader_id": message.sender,
                            "leader_epoch": message.epoch,
                        }
                    ],
                }
            ],
            "leader_endpoints": [],
        }
    elif isinstance(message, EndQuorumEpochRequest):
        body = {
            "cluster_id": cluster_id,
            "topics": [
                {
                    "topic_name": topic,
                    "partitions": [
                        {
                            "partition_index": METADATA_PARTITION,
                            "leader_id": message.sender,
                            "leader_epoch": message.epoch,
                            "preferred_successors": list(message.preferred_successors),
                            "preferred_candidates": [
                                {"candidate_id": node, "candidate_directory_id": _NO_UUID}
                                for node in message.preferred_successors
                            ],
                        }
                    ],
                }
            ],
            "leader_endpoints": [],
        }
    elif isinstance(message, FetchRequest):
        body = {
            "cluster_id": cluster_id,
            "replica_id": message.sender,
            "replica_state": {"replica_id": message.sender, "replica_epoch": -1},
            "max_wait_ms": message.max_wait_ms,
            "min_bytes": 0,
            "max_bytes": fetch_max_bytes,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic": topic,
                    "topic_id": METADATA_TOPIC_ID,
                    "partitions": [
                        {
                            "partition": METADATA_PARTITION,
                            "current_leader_epoch": message.epoch,
                            "fetch_offset": message.fetch_offset,
                            "last_fetched_epoch": message.last_fetched_epoch,
                            "log_start_offset": -1,
                            "partition_max_bytes": fetch_max_bytes,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
    else:
        body = {
            "cluster_id": cluster_id,
            "replica_id": message.sender,
            "max_bytes": message.max_bytes,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {
                            "partition": METADATA_PARTITION,
                            "current_leader_epoch": message.epoch,
                            "snapshot_id": {
                                "end_offset": message.snapshot_id.offset,
                                "epoch": message.snapshot_id.epoch,
                            },
                            "position": message.position,
                        }
                    ],
                }
            ],
        }
    return key, version, body


def request_from_wire(
    api_key: int, body: dict[str, Any], receiver: NodeId, cluster_id: str
) -> RaftRequest:
    """The core's request for a received body; :class:`WireError` if the core must not see it."""
    theirs = body.get("cluster_id")
    if theirs is not None and theirs != cluster_id:
        raise WireError(
            INCONSISTENT_CLUSTER_ID,
            f"request for cluster {theirs!r}, this node is in cluster {cluster_id!r} "
            "(controller.quorum.voters or cluster.id differ between the nodes?)",
        )
    voter_id = body.get("voter_id", -1)
    if voter_id >= 0 and voter_id != receiver:
        raise WireError(
            INVALID_VOTER_KEY,
            f"request for voter {voter_id} reached node {receiver} "
            "(controller.quorum.voters maps that id to this node's address)",
        )
    if api_key == ApiKey.VOTE:
        p = _partition(body["topics"])
        return VoteRequest(
            sender=p["candidate_id"],
            receiver=receiver,
            epoch=p["candidate_epoch"],
            last_offset_and_epoch=OffsetAndEpoch(p["last_offset"], p["last_offset_epoch"]),
            pre_vote=p["pre_vote"],
        )
    if api_key == ApiKey.BEGIN_QUORUM_EPOCH:
        p = _partition(body["topics"])
        return BeginQuorumEpochRequest(p["leader_id"], receiver, p["leader_epoch"])
    if api_key == ApiKey.END_QUORUM_EPOCH:
        p = _partition(body["topics"])
        successors = tuple(c["candidate_id"] for c in p["preferred_candidates"]) or tuple(
            p["preferred_successors"]
        )
        return EndQuorumEpochRequest(p["leader_id"], receiver, p["leader_epoch"], successors)
    if api_key == ApiKey.FETCH:
        p = _partition(body["topics"], "topic")
        state = body.get("replica_state") or {}
        replica = state.get("replica_id", body["replica_id"])
        if replica < 0:
            raise WireError(INVALID_REQUEST, f"{METADATA_TOPIC} is fetched by replicas only")
        return FetchRequest(
            sender=replica,
            receiver=receiver,
            epoch=p["current_leader_epoch"],
            fetch_offset=p["fetch_offset"],
            last_fetched_epoch=p["last_fetched_epoch"],
            max_wait_ms=body["max_wait_ms"],
        )
    if api_key == ApiKey.FETCH_SNAPSHOT:
        p = _partition(body["topics"], "name")
        snapshot = p["snapshot_id"]
        return FetchSnapshotRequest(
            sender=body["replica_id"],
            receiver=receiver,
            epoch=p["current_leader_epoch"],
            snapshot_id=OffsetAndEpoch(snapshot["end_offset"], snapshot["epoch"]),
            position=p["position"],
            max_bytes=body["max_bytes"],
        )
    raise WireError(INVALID_REQUEST, f"api key {api_key} is not a quorum request")


# ---- responses ------------------------------------------------------------------


def error_response(api_key: int, error_code: int) -> dict[str, Any]:
    """A top-level error answer to any quorum request."""
    if api_key == ApiKey.FETCH:
        return {"throttle_time_ms": 0, "error_code": error_code, "session_id": 0, "responses": []}
    if api_key == ApiKey.FETCH_SNAPSHOT:
        return {"throttle_time_ms": 0, "error_code": error_code, "topics": []}
    return {"error_code": error_code, "topics": []}


def response_to_wire(message: RaftResponse) -> dict[str, Any]:
    """The body that answers a request with the core's ``message``."""
    code = int(message.error)
    if isinstance(message, VoteResponse):
        partition: dict[str, Any] = {
            "partition_index": METADATA_PARTITION,
            "error_code": code,
            "leader_id": _leader(message.leader_id),
            "leader_epoch": message.epoch,
            "vote_granted": message.vote_granted,
        }
        return {
            "error_code": 0,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
        }
    if isinstance(message, BeginQuorumEpochResponse | EndQuorumEpochResponse):
        partition = {
            "partition_index": METADATA_PARTITION,
            "error_code": code,
            "leader_id": _leader(message.leader_id),
            "leader_epoch": message.epoch,
        }
        return {
            "error_code": 0,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
        }
    leader = {"leader_id": _leader(message.leader_id), "leader_epoch": message.epoch}
    if isinstance(message, FetchResponse):
        partition = {
            "partition_index": METADATA_PARTITION,
            "error_code": code,
            "high_watermark": -1 if message.high_watermark is None else message.high_watermark,
            "last_stable_offset": -1,
            "log_start_offset": message.log_start_offset,
            "diverging_epoch": (
                {
                    "epoch": message.diverging_epoch.epoch,
                    "end_offset": message.diverging_epoch.offset,
                }
                if message.diverging_epoch
                else {}
            ),
            "current_leader": leader,
            "snapshot_id": (
                {"end_offset": message.snapshot_id.offset, "epoch": message.snapshot_id.epoch}
                if message.snapshot_id
                else {}
            ),
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            "records": encode_entries(message.entries) if message.entries else None,
        }
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "session_id": 0,
            "responses": [
                {"topic": METADATA_TOPIC, "topic_id": METADATA_TOPIC_ID, "partitions": [partition]}
            ],
        }
    partition = {
        "index": METADATA_PARTITION,
        "error_code": code,
        "snapshot_id": {
            "end_offset": message.snapshot_id.offset,
            "epoch": message.snapshot_id.epoch,
        },
        "current_leader": leader,
        "size": message.size,
        "position": message.position,
        "unaligned_records": message.chunk,
    }
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "topics": [{"name": METADATA_TOPIC, "partitions": [partition]}],
    }


def response_from_wire(request: RaftRequest, body: dict[str, Any]) -> RaftResponse:
    """The core's response for a peer's answer to ``request``; :class:`WireError` if the
    answer is an error the core has no use for (another cluster, a malformed body)."""
    if body.get("error_code"):
        raise WireError(
            body["error_code"], f"error {body['error_code']} from node {request.receiver}"
        )
    sender, receiver = request.receiver, request.sender
    if isinstance(request, VoteRequest):
        p = _partition(body["topics"])
        return VoteResponse(
            sender,
            receiver,
            _code(p["error_code"]),
            p["leader_epoch"],
            _node(p["leader_id"]),
            p["vote_granted"],
            request.pre_vote,
        )
    if isinstance(request, BeginQuorumEpochRequest | EndQuorumEpochRequest):
        p = _partition(body["topics"])
        kind = (
            BeginQuorumEpochResponse
            if isinstance(request, BeginQuorumEpochRequest)
            else EndQuorumEpochResponse
        )
        return kind(
            sender, receiver, _code(p["error_code"]), p["leader_epoch"], _node(p["leader_id"])
        )
    if isinstance(request, FetchRequest):
        p = _partition(body["responses"], "topic")
        leader = p["current_leader"] or {"leader_id": -1, "leader_epoch": request.epoch}
        diverging = p["diverging_epoch"]
        snapshot = p["snapshot_id"]
        return FetchResponse(
            sender,
            receiver,
            _code(p["error_code"]),
            leader["leader_epoch"],
            _node(leader["leader_id"]),
            request.fetch_offset,
            high_watermark=None if p["high_watermark"] < 0 else p["high_watermark"],
            log_start_offset=max(p["log_start_offset"], 0),
            entries=decode_entries(p["records"]),
            diverging_epoch=(
                OffsetAndEpoch(diverging["end_offset"], diverging["epoch"]) if diverging else None
            ),
            snapshot_id=OffsetAndEpoch(snapshot["end_offset"], snapshot["epoch"])
            if snapshot
            else None,
        )
    p = _partition(body["topics"], "name")
    leader = p["current_leader"] or {"leader_id": -1, "leader_epoch": request.epoch}
    snapshot = p["snapshot_id"]
    return FetchSnapshotResponse(
        sender,
        receiver,
        _code(p["error_code"]),
        leader["leader_epoch"],
        _node(leader["leader_id"]),
        OffsetAndEpoch(snapshot["end_offset"], snapshot["epoch"]),
        position=p["position"],
        size=p["size"],
        chunk=bytes(p["unaligned_records"] or b""),
    )
