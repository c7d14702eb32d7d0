"""The controller listener's handlers for the active controller's APIs.

BrokerRegistration (62), BrokerHeartbeat (63), AlterPartition (56) and
AllocateProducerIds (67) go through ``ControllerApis``; CreateTopics (19) and
DeleteTopics (20), which brokers forward for their clients, go to the
controller's topic calls. Each answer is sent once its records committed
(NOT_CONTROLLER on a node that does not lead, which the sender retries at the
leader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.controller import NewTopic, TopicOutcome
from log_engine.controller.wire import ControllerApis
from log_engine.errors import ErrorCode

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
