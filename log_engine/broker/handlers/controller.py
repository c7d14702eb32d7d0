"""The controller listener's handlers for the active controller's APIs.

BrokerRegistration (62), BrokerHeartbeat (63), AlterPartition (56) and
AllocateProducerIds (67) go through ``ControllerApis``; CreateTopics (19),
DeleteTopics (20), CreatePartitions (37), IncrementalAlterConfigs (44, topics),
CreateAcls (30), DeleteAcls (31) and
AlterUserScramCredentials (51), which brokers forward for their clients (after
their own checks), go to the controller's topic, ACL and SCRAM calls. Each
answer is sent once its records committed (NOT_CONTROLLER on a node that does
not lead, which the sender retries at the leader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from log_engine.acls import AclError
from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.security.scram_admin import scram_record
from log_engine.controller import NewPartitions, NewTopic, TopicConfigChange, TopicOutcome
from log_engine.controller.wire import ControllerApis
from log_engine.errors import ErrorCode
from log_engine.protocol.acl_bodies import binding_from_creation, filter_from_body, matching_body

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker
    from log_engine.broker.cluster.controller_service import ControllerService

Body = dict[str, Any]


def _service(context: RequestContext) -> ControllerService | None:
    node = context.broker.cluster_node
    return node.controller if node is not None else None


async def handle_controller_api(context: RequestContext, body: Body) -> Body:
    api_key = context.header.api_key
    service = _service(context)
    if service is None:
        return ControllerApis.not_controller(api_key)
    return await service.handle(api_key, context.version, body, context.peer)


def connection_closed(broker: Broker, peer: str) -> None:
    """A controller-listener connection closed: evidence if it carried a broker's heartbeats."""
    node = broker.cluster_node
    if node is not None and node.controller is not None:
        node.controller.connection_closed(peer)


def _result(outcome: TopicOutcome) -> Body:
    return {
        "name": outcome.name,
        "error_code": outcome.error_code,
        "error_message": outcome.error_message,
        "num_partitions": outcome.num_partitions,
        "replication_factor": outcome.replication_factor,
        "configs": [],
    }


async def handle_create_topics(context: RequestContext, body: Body) -> Body:
    service = _service(context)
    topics = [
        NewTopic(
            t["name"],
            t["num_partitions"],
            t["replication_factor"],
            {a["partition_index"]: tuple(a["broker_ids"]) for a in t["assignments"]},
            {c["name"]: c["value"] for c in t["configs"] if c["value"] is not None},
        )
        for t in body["topics"]
    ]
    if service is None:
        outcomes = tuple(TopicOutcome(t.name, int(ErrorCode.NOT_CONTROLLER)) for t in topics)
    else:
        outcomes = await service.create_topics(topics, bool(body.get("validate_only")))
    return {"throttle_time_ms": 0, "topics": [_result(o) for o in outcomes]}


async def handle_create_partitions(context: RequestContext, body: Body) -> Body:
    service = _service(context)
    requests = [
        NewPartitions(
            t["name"],
            t["count"],
            None
            if t["assignments"] is None
            else tuple(tuple(a["broker_ids"]) for a in t["assignments"]),
        )
        for t in body["topics"]
    ]
    if service is None:
        outcomes = tuple(TopicOutcome(r.name, int(ErrorCode.NOT_CONTROLLER)) for r in requests)
    else:
        outcomes = await service.create_partitions(requests, bool(body.get("validate_only")))
    return {
        "throttle_time_ms": 0,
        "results": [
            {"name": o.name, "error_code": o.error_code, "error_message": o.error_message}
            for o in outcomes
        ],
    }


async def handle_incremental_alter_configs(context: RequestContext, body: Body) -> Body:
    """Topic configs a broker checked: SET (0) and DELETE (1) operations only."""
    service = _service(context)
    changes = [
        TopicConfigChange(
            r["resource_name"],
            {c["name"]: c["value"] for c in r["configs"] if c["config_operation"] == 0},
            tuple(c["name"] for c in r["configs"] if c["config_operation"] == 1),
        )
        for r in body["resources"]
    ]
    if service is None:
        outcomes = tuple(TopicOutcome(c.name, int(ErrorCode.NOT_CONTROLLER)) for c in changes)
    else:
        outcomes = await service.alter_topic_configs(changes, bool(body.get("validate_only")))
    return {
        "throttle_time_ms": 0,
        "responses": [
            {"error_code": o.error_code, "error_message": o.error_message,
             "resource_type": 2, "resource_name": o.name}
            for o in outcomes
        ],
    }  # fmt: skip


async def handle_delete_topics(context: RequestContext, body: Body) -> Body:
    service = _service(context)
    names = list(body["topic_names"])
    if service is None:
        outcomes = tuple(TopicOutcome(n, int(ErrorCode.NOT_CONTROLLER)) for n in names)
    else:
        outcomes = await service.delete_topics(names)
    return {
        "throttle_time_ms": 0,
        "responses": [
            {"name": o.name, "error_code": o.error_code, "error_message": o.error_message}
            for o in outcomes
        ],
    }


async def handle_create_acls(context: RequestContext, body: Body) -> Body:
    service = _service(context)
    message: str | None
    try:
        bindings = [binding_from_creation(c) for c in body["creations"]]
    except AclError as exc:
        code, message = int(ErrorCode.INVALID_REQUEST), str(exc)
    else:
        done = service is not None and await service.create_acls(bindings)
        code, message = (0, None) if done else (int(ErrorCode.NOT_CONTROLLER), None)
    return {
        "throttle_time_ms": 0,
        "results": [{"error_code": code, "error_message": message} for _ in body["creations"]],
    }


async def handle_delete_acls(context: RequestContext, body: Body) -> Body:
    service = _service(context)
    try:
        filters = [filter_from_body(f) for f in body["filters"]]
    except AclError as exc:
        return _delete_acls_refused(body, int(ErrorCode.INVALID_REQUEST), str(exc))
    removed = None if service is None else await service.delete_acls(filters)
    if removed is None:
        return _delete_acls_refused(body, int(ErrorCode.NOT_CONTROLLER), None)
    return {
        "throttle_time_ms": 0,
        "filter_results": [
            {
                "error_code": 0,
                "error_message": None,
                "matching_acls": [matching_body(b) for b in group],
            }
            for group in removed
        ],
    }


def _delete_acls_refused(body: Body, code: int, message: str | None) -> Body:
    return {
        "throttle_time_ms": 0,
        "filter_results": [
            {"error_code": code, "error_message": message, "matching_acls": []}
            for _ in body["filters"]
        ],
    }


async def handle_alter_user_scram_credentials(context: RequestContext, body: Body) -> Body:
    """Credentials a broker checked: salted here into StoredKey / ServerKey records."""
    service = _service(context)
    deletions = [(d["name"], d["mechanism"]) for d in body["deletions"]]
    upsertions = [scram_record(u) for u in body["upsertions"]]
    done = service is not None and await service.alter_scram(deletions, upsertions)
    code = 0 if done else int(ErrorCode.NOT_CONTROLLER)
    users = dict.fromkeys(i["name"] for i in body["deletions"] + body["upsertions"])
    return {
        "throttle_time_ms": 0,
        "results": [{"user": u, "error_code": code, "error_message": None} for u in users],
    }
