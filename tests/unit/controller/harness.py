"""Drive a QuorumController through a MetadataListener, committing each result in order.

This stands in for the quorum only in committing what the controller returns at
once, in order (the Raft test in ``test_controller_raft.py`` runs the real core).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any, TypeVar

from log_engine.controller import (
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerConfig,
    ControllerResult,
    HeartbeatReply,
    NewTopic,
    QuorumController,
    TopicOutcome,
)
from log_engine.metadata.listener import MetadataListener
from log_engine.metadata.records import Endpoint, MetadataRecord, encode_record
from log_engine.metadata.types import PartitionState
from log_engine.replication.raft.types import Entry, LeaderAndEpoch

T = TypeVar("T")


class Harness:
    """One active controller (node 0) whose results commit immediately."""

    def __init__(
        self, seed: int = 0, bootstrap: Sequence[MetadataRecord] = (), **config: Any
    ) -> None:
        self.listener = MetadataListener()
        self.controller = QuorumController(
            ControllerConfig(node_id=0, **config), random.Random(seed), bootstrap=bootstrap
        )
        self.controller.attach(self.listener)
        self.offset = 0
        self.epoch = 1
        self.now_ms = 0
        self.listener.handle_leader_change(LeaderAndEpoch(0, self.epoch))
        self.commit(self.controller.tick(0))  # the activation NoOp
        self.commit(self.controller.tick(0))  # the bootstrap marker of a new log
        assert self.controller.is_active

    def commit(self, result: ControllerResult[T]) -> T:
        entries = tuple(
            Entry(self.offset + i, self.epoch, encode_record(r))
            for i, r in enumerate(result.records)
        )
        self.offset += len(entries)
        if entries:
            self.listener.handle_commit(entries, self.offset)
        return result.response

    @property
    def image(self):  # type: ignore[no-untyped-def]
        return self.listener.image

    def register(self, broker_id: int, incarnation: int | None = None) -> int:
        reply = self.commit(
            self.controller.register_broker(
                BrokerRegistration(
                    broker_id,
                    uuid.UUID(int=incarnation if incarnation is not None else broker_id),
                    (Endpoint("PLAINTEXT", "localhost", 9090 + broker_id),),
                ),
                self.now_ms,
            )
        )
        assert reply.error_code == 0, reply
        return reply.broker_epoch

    def heartbeat(self, broker_id: int, offset: int | None = None, **kw: bool) -> HeartbeatReply:
        epoch = self.image.registrations[broker_id].broker_epoch
        current = self.image.end_offset - 1 if offset is None else offset
        return self.commit(
            self.controller.heartbeat(BrokerHeartbeat(broker_id, epoch, current, **kw), self.now_ms)
        )

    def start_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            self.register(broker_id)
        for broker_id in broker_ids:
            assert not self.heartbeat(broker_id).is_fenced

    def create(self, name: str, partitions: int = 1, factor: int = 3, **kw: Any) -> TopicOutcome:
        (outcome,) = self.commit(
            self.controller.create_topics([NewTopic(name, partitions, factor, **kw)], self.now_ms)
        )
        return outcome

    def state(self, topic: str, partition: int = 0) -> PartitionState:
        state = self.image.partition(topic, partition)
        assert state is not None
        return state

    def advance(self, ms: int) -> None:
        self.now_ms += ms
        self.commit(self.controller.tick(self.now_ms))
