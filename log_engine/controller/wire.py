"""The controller listener's request bodies to controller calls, and replies back to bodies.

``ControllerApis.handle(api_key, version, body, now_ms)`` takes a decoded request
body (a dict as the protocol codec gives it) of BrokerRegistration (62),
BrokerHeartbeat (63), AlterPartition (56) or AllocateProducerIds (67) and returns
a :class:`ControllerResult` whose ``response`` is the response body to encode at
the same version. The caller appends ``records`` first and sends the body only
after they committed (NOT_CONTROLLER instead if the append failed:
:meth:`ControllerApis.not_controller`).

AlterPartition v0-1 name topics; v2+ use ids: the adapter maps names to ids
through the controller's image and back for the response.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from log_engine.controller.controller import QuorumController
from log_engine.controller.results import (
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerResult,
    IsrChange,
)
from log_engine.errors import ErrorCode
from log_engine.metadata.records import Endpoint
from log_engine.protocol.versions import ApiKey

Body = dict[str, Any]
_UNKNOWN = uuid.UUID("00000000-0000-0000-0000-00000000f00d")


class ControllerApis:
    """Dispatches the controller listener's APIs to a :class:`QuorumController`."""

    def __init__(self, controller: QuorumController) -> None:
        self.controller = controller
        self._handlers: dict[int, Callable[[int, Body, int], ControllerResult[Body]]] = {
            ApiKey.BROKER_REGISTRATION: self.broker_registration,
            ApiKey.BROKER_HEARTBEAT: self.broker_heartbeat,
            ApiKey.ALTER_PARTITION: self.alter_partition,
            ApiKey.ALLOCATE_PRODUCER_IDS: self.allocate_producer_ids,
        }

    def handle(self, api_key: int, version: int, body: Body, now_ms: int) -> ControllerResult[Body]:
        """Records to append and the response body (``KeyError`` for another api key)."""
        return self._handlers[api_key](version, body, now_ms)

    @staticmethod
    def not_controller(api_key: int) -> Body:
        """The response body when this node turned out not to be the active controller."""
        body: Body = {"error_code": int(ErrorCode.NOT_CONTROLLER)}
        if api_key == ApiKey.ALTER_PARTITION:
            body["topics"] = []
        return body

    def broker_registration(self, version: int, body: Body, now_ms: int) -> ControllerResult[Body]:
        request = BrokerRegistration(
            body["broker_id"],
            body["incarnation_id"],
            tuple(
                Endpoint(e["name"], e["host"], e["port"], e["security_protocol"])
                for e in body["listeners"]
            ),
            body["rack"],
            body["cluster_id"],
        )
        result = self.controller.register_broker(request, now_ms)
        reply = result.response
        return ControllerResult(
            result.records, {"error_code": reply.error_code, "broker_epoch": reply.broker_epoch}
        )

    def broker_heartbeat(self, version: int, body: Body, now_ms: int) -> ControllerResult[Body]:
        request = BrokerHeartbeat(
            body["broker_id"],
            body["broker_epoch"],
            body["current_metadata_offset"],
            body["want_fence"],
            body["want_shut_down"],
        )
        result = self.controller.heartbeat(request, now_ms)
        reply = result.response
        return ControllerResult(
            result.records,
            {
                "error_code": reply.error_code,
                "is_caught_up": reply.is_caught_up,
                "is_fenced": reply.is_fenced,
                "should_shut_down": reply.should_shut_down,
            },
        )

    def alter_partition(self, version: int, body: Body, now_ms: int) -> ControllerResult[Body]:
        image = self.controller.image
        changes: list[IsrChange] = []
        names: dict[uuid.UUID, str] = {}
        for topic in body["topics"]:
            if version >= 2:
                topic_id = topic["topic_id"]
            else:
                known = image.topics.get(topic["topic_name"])
                # an unknown name gets an id no topic has, so its partitions answer
                # UNKNOWN_TOPIC_OR_PARTITION under that name
                topic_id = known.topic_id if known else uuid.uuid5(_UNKNOWN, topic["topic_name"])
                names[topic_id] = topic["topic_name"]
            for p in topic["partitions"]:
                if version >= 3:
                    members = p["new_isr_with_epochs"]
                    new_isr = tuple(m["broker_id"] for m in members)
                    epochs = {m["broker_id"]: m["broker_epoch"] for m in members}
                else:
                    new_isr, epochs = tuple(p["new_isr"]), {}
                changes.append(
                    IsrChange(
                        topic_id,
                        p["partition_index"],
                        p["leader_epoch"],
                        p["partition_epoch"],
                        new_isr,
                        epochs,
                    )
                )
        result = self.controller.alter_partition(
            body["broker_id"], body["broker_epoch"], changes, version
        )
        reply = result.response
        topics: dict[uuid.UUID, Body] = {}
        for outcome in reply.partitions:
            topic_body = topics.setdefault(
                outcome.topic_id,
                {
                    "topic_id": outcome.topic_id,
                    "topic_name": names.get(outcome.topic_id, ""),
                    "partitions": [],
                },
            )
            state = outcome.state
            topic_body["partitions"].append(
                {
                    "partition_index": outcome.partition,
                    "error_code": outcome.error_code,
                    "leader_id": state.leader if state else -1,
                    "leader_epoch": state.leader_epoch if state else -1,
                    "isr": list(state.isr) if state else [],
                    "partition_epoch": state.partition_epoch if state else -1,
                }
            )
        return ControllerResult(
            result.records, {"error_code": reply.error_code, "topics": list(topics.values())}
        )

    def allocate_producer_ids(
        self, version: int, body: Body, now_ms: int
    ) -> ControllerResult[Body]:
        result = self.controller.allocate_producer_ids(body["broker_id"], body["broker_epoch"])
        block = result.response
        return ControllerResult(
            result.records,
            {
                "error_code": block.error_code,
                "producer_id_start": block.start,
                "producer_id_len": block.length,
            },
        )
