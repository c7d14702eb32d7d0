"""``ControllerAlterPartitionSender``: a leader's ISR changes as AlterPartition (56) requests.

The replica manager's :class:`AlterPartitionSender`, on the wire: AlterPartition
v2 (topics by id) to the active controller, naming the leader and partition
epochs the leader holds. NOT_CONTROLLER (a controller election) is retried at
the new leader; the answer is the new :class:`PartitionState` or the error code.
"""

from __future__ import annotations

import uuid
from typing import Any

from log_engine.broker.cluster.channel import NOT_CONTROLLER, ControllerChannel
from log_engine.broker.cluster.lifecycle import BrokerLifecycle
from log_engine.metadata.types import PartitionState
from log_engine.protocol import ApiKey

ALTER_PARTITION_VERSION = 2
REQUEST_TIMEOUT_MS = 10_000


class ControllerAlterPartitionSender:
    """Sends ISR changes to the active controller."""

    def __init__(self, channel: ControllerChannel, lifecycle: BrokerLifecycle) -> None:
        self._channel = channel
        self._lifecycle = lifecycle

    async def alter_isr(
        self, state: PartitionState, new_isr: tuple[int, ...]
    ) -> PartitionState | int:
        body = {
            "broker_id": self._lifecycle.broker_id,
            "broker_epoch": self._lifecycle.broker_epoch,
            "topics": [
                {
                    "topic_id": uuid.UUID(bytes=state.topic_id),
                    "topic_name": state.topic,
                    "partitions": [
                        {
                            "partition_index": state.partition,
                            "leader_epoch": state.leader_epoch,
                            "new_isr": list(new_isr),
                            "new_isr_with_epochs": [],
                            "leader_recovery_state": 0,
                            "partition_epoch": state.partition_epoch,
                        }
                    ],
                }
            ],
        }
        answer = await self._channel.send(
            ApiKey.ALTER_PARTITION,
            ALTER_PARTITION_VERSION,
            body,
            REQUEST_TIMEOUT_MS,
            retry_if=_not_controller_anywhere,
        )
        if answer is None:
            return NOT_CONTROLLER
        if answer["error_code"]:
            return int(answer["error_code"])
        for topic in answer["topics"]:
            for p in topic["partitions"]:
                if p["partition_index"] != state.partition:
                    continue
                if p["error_code"]:
                    return int(p["error_code"])
                return PartitionState(
                    state.topic,
                    state.partition,
                    p["leader_id"],
                    p["leader_epoch"],
                    p["partition_epoch"],
                    state.replicas,
                    tuple(p["isr"]),
                    state.topic_id,
                )
        return NOT_CONTROLLER


def _not_controller_anywhere(body: dict[str, Any]) -> bool:
    if body.get("error_code") == NOT_CONTROLLER:
        return True
    return any(
        p.get("error_code") == NOT_CONTROLLER
        for t in body.get("topics", ())
        for p in t.get("partitions", ())
    )
