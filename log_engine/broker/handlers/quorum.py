"""The controller listener's handlers: KRaft's quorum APIs and ApiVersions.

Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch (of ``__cluster_metadata``) and
FetchSnapshot go through the node's :class:`ControllerQuorum` (translated to
the Raft core's messages and back); DescribeQuorum is answered from the leader's
view (another node answers NOT_LEADER_OR_FOLLOWER with the leader it knows and
the voters' endpoints, so a tool can ask the leader). A request of another
cluster is answered INCONSISTENT_CLUSTER_ID and logged; the core never sees it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from log_engine.broker.handlers import controller
from log_engine.broker.handlers.context import RequestContext
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.protocol.versions import CONTROLLER_VERSIONS, api_version_entries
from log_engine.replication.quorum.runner import ControllerQuorum
from log_engine.replication.quorum.translate import (
    INCONSISTENT_CLUSTER_ID,
    INVALID_VOTER_KEY,
    METADATA_PARTITION,
    METADATA_TOPIC,
    WireError,
    error_response,
    request_from_wire,
    response_to_wire,
)
from log_engine.replication.raft import NotLeaderError, ReplicaStatus

log = logging.getLogger(__name__)


def _quorum(context: RequestContext) -> ControllerQuorum:
    quorum = context.broker.quorum
    if quorum is None:  # the controller listener exists only with a quorum
        raise RuntimeError("no controller quorum on this node")
    return quorum


async def handle_api_versions(context: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "error_code": 0,
        "api_keys": api_version_entries(CONTROLLER_VERSIONS),
        "throttle_time_ms": 0,
    }


async def handle_quorum_request(context: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    """Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch or FetchSnapshot: through the core."""
    quorum = _quorum(context)
    api_key = context.header.api_key
    try:
        request = request_from_wire(api_key, body, quorum.node_id, quorum.cluster.cluster_id)
    except WireError as exc:
        serious = exc.error_code in (INCONSISTENT_CLUSTER_ID, INVALID_VOTER_KEY)
        level = logging.ERROR if serious else logging.INFO
        log.log(level, "quorum: refused %s from %s: %s", ApiKey(api_key).name, context.peer, exc)
        return error_response(api_key, exc.error_code)
    response = await quorum.handle_request(request)
    return response_to_wire(response)


async def handle_describe_quorum(context: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    quorum = _quorum(context)
    nodes = [
        {
            "node_id": voter.node_id,
            "listeners": [
                {
                    "name": quorum.cluster.controller_listener_name,
                    "host": voter.host,
                    "port": voter.port,
                }
            ],
        }
        for voter in quorum.cluster.voters
    ]
    partition: dict[str, Any] = {"partition_index": METADATA_PARTITION}
    try:
        status = quorum.describe()
    except NotLeaderError as exc:
        leader = quorum.leader
        partition.update(
            error_code=int(ErrorCode.NOT_LEADER_OR_FOLLOWER),
            error_message=str(exc),
            leader_id=-1 if leader.leader_id is None else leader.leader_id,
            leader_epoch=leader.epoch,
            high_watermark=quorum.high_watermark,
        )
    else:

        def replica(state: ReplicaStatus) -> dict[str, Any]:
            last_fetch = -1
            if state.last_fetch_ms is not None and state.node_id != status.leader_id:
                last_fetch = quorum.monotonic_to_wall_ms(state.last_fetch_ms)
            return {
                "replica_id": state.node_id,
                "log_end_offset": state.end_offset,
                "last_fetch_timestamp": last_fetch,
                "last_caught_up_timestamp": -1,
            }

        partition.update(
            error_code=0,
            leader_id=status.leader_id,
            leader_epoch=status.epoch,
            high_watermark=status.high_watermark,
            current_voters=[replica(v) for v in status.voters],
            observers=[replica(o) for o in status.observers],
        )
    return {
        "error_code": 0,
        "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
        "nodes": nodes,
    }


CONTROLLER_HANDLERS: dict[
    ApiKey, Callable[[RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | None]]
] = {
    ApiKey.API_VERSIONS: handle_api_versions,
    ApiKey.VOTE: handle_quorum_request,
    ApiKey.BEGIN_QUORUM_EPOCH: handle_quorum_request,
    ApiKey.END_QUORUM_EPOCH: handle_quorum_request,
    ApiKey.FETCH: handle_quorum_request,
    ApiKey.FETCH_SNAPSHOT: handle_quorum_request,
    ApiKey.DESCRIBE_QUORUM: handle_describe_quorum,
    ApiKey.ALTER_PARTITION: controller.handle_controller_api,
    ApiKey.BROKER_REGISTRATION: controller.handle_controller_api,
    ApiKey.BROKER_HEARTBEAT: controller.handle_controller_api,
    ApiKey.ALLOCATE_PRODUCER_IDS: controller.handle_controller_api,
    ApiKey.CREATE_TOPICS: controller.handle_create_topics,
    ApiKey.DELETE_TOPICS: controller.handle_delete_topics,
    ApiKey.CREATE_PARTITIONS: controller.handle_create_partitions,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: controller.handle_incremental_alter_configs,
    ApiKey.CREATE_ACLS: controller.handle_create_acls,
    ApiKey.DELETE_ACLS: controller.handle_delete_acls,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: controller.handle_alter_user_scram_credentials,
}
"""What the controller listener dispatches on (see ``CONTROLLER_VERSIONS``): the
quorum's APIs, and the active controller's (``handlers/controller.py``)."""
