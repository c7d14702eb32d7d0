"""``QuorumController``: the active controller's decisions, as a pure object.

No sockets, no clock, no randomness but the seeded ``random.Random`` handed in:
every call takes ``now_ms`` and returns a :class:`ControllerResult` (records to
append, then the reply). The controller never changes the committed image:

- it reads a *speculative* image: the committed image (kept current by the
  :class:`MetadataListener` it is attached to) plus the records it returned
  that have not committed yet, so a second request sees the first one's effect;
- when its own records commit (entries of the epoch it leads, in order), they
  leave the pending list; when it loses the leadership, the pending records
  are dropped and it answers NOT_CONTROLLER, as Kafka's QuorumController
  reverts to the last committed state.

Activation: after winning an election the controller first appends a
``NoOpRecord`` (``tick`` returns it). When that commits, every entry of earlier
leaders has committed and been applied (Raft commits them no later), so the
controller acts on the whole history; until then requests get NOT_CONTROLLER.
Every registered broker then gets a full session from its first contact.

The decisions are made by the module of each concept (``__init__.py`` lists them).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TypeVar

from log_engine.acls import AclBinding, AclFilter
from log_engine.controller.acls import create_acl_records, delete_acl_records
from log_engine.controller.alter_partition import alter_partition_result
from log_engine.controller.brokers import BrokerLifecycle
from log_engine.controller.config import ControllerConfig
from log_engine.controller.elections import elect_preferred
from log_engine.controller.producer_ids import allocate_producer_ids_result
from log_engine.controller.rebalance import RebalanceSchedule
from log_engine.controller.results import (
    AlterPartitionReply,
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerResult,
    HeartbeatReply,
    IsrChange,
    NewPartitions,
    NewTopic,
    ProducerIdBlock,
    RegistrationReply,
    TopicConfigChange,
    TopicOutcome,
)
from log_engine.controller.scram import scram_records
from log_engine.controller.topic_admin import (
    PerTopicRequest,
    alter_topic_configs_request,
    create_partitions_request,
    create_topics_request,
    delete_topics_request,
)
from log_engine.errors import ErrorCode
from log_engine.invariants import check
from log_engine.metadata.bootstrap import bootstrap_records
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.metadata.records import MetadataRecord, NoOpRecord, UserScramCredentialRecord
from log_engine.metadata.types import PartitionState
from log_engine.replication.raft.types import LeaderAndEpoch

T = TypeVar("T")
NONE = int(ErrorCode.NONE)
NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)


class QuorumController:
    """The controller logic of one voter; it decides only while it is the active leader."""

    def __init__(
        self,
        config: ControllerConfig,
        rng: random.Random,
        image: MetadataImage = MetadataImage.EMPTY,
        bootstrap: Sequence[MetadataRecord] = (),
    ) -> None:
        """``bootstrap``: the records of ``sluice storage format`` for a new log
        (:func:`~log_engine.metadata.bootstrap.bootstrap_records`)."""
        self.config = config
        self._bootstrap = tuple(bootstrap)
        self._bootstrap_checked = False
        self._rng = rng
        self._committed = image
        self._image = image
        self._pending: deque[MetadataRecord] = deque()
        self._epoch: int | None = None  # the epoch this node leads, if it does
        self._ready = False
        self._noop_sent = False
        self._brokers = BrokerLifecycle(config)
        self._rebalance = RebalanceSchedule(
            config.auto_leader_rebalance_enable, config.leader_imbalance_check_interval_ms
        )
        self._brokers.learn_offsets_from_image(image)

    def attach(self, listener: MetadataListener) -> None:
        """Follow ``listener``'s commits and leader changes from its current image on."""
        self._committed = self._image = listener.image
        self._brokers.learn_offsets_from_image(listener.image)
        listener.subscribe(self.on_update, self.on_leader_change)

    # ---- state -----------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """Whether this node leads the quorum (it may still be catching up)."""
        return self._epoch is not None

    @property
    def is_active(self) -> bool:
        """Whether this node leads and has applied every earlier leader's entries."""
        return self._epoch is not None and self._ready

    @property
    def image(self) -> MetadataImage:
        """The committed image plus this controller's records not committed yet."""
        return self._image

    @property
    def committed_image(self) -> MetadataImage:
        return self._committed

    @property
    def pending_records(self) -> int:
        return len(self._pending)

    def min_insync_replicas(self, topic: str) -> int:
        return self.config.topic_min_insync_replicas(self._image, topic)

    # ---- listener events -------------------------------------------------------------------------

    def on_leader_change(self, leader: LeaderAndEpoch) -> None:
        if leader.leader_id == self.config.node_id:
            if self._epoch != leader.epoch:
                self._reset()
                self._epoch = leader.epoch
        elif self._epoch is not None:
            self._reset()

    def on_update(self, update: MetadataUpdate) -> None:
        self._committed = update.image
        self._brokers.on_update(update)
        for committed in update.records:
            if self._epoch is not None and committed.epoch == self._epoch:
                record = committed.record
                check(
                    bool(self._pending) and self._pending[0] == record,
                    f"committed {record!r:.120} at {committed.offset} is not the next of "
                    f"this controller's pending records",
                )
                self._pending.popleft()
                self._ready = True
        self._image = self._committed.apply_all(self._pending) if self._pending else update.image

    def renounce(self) -> None:
        """Stop acting as the leader until the next leader change names this node again.

        For an append that failed (``NotLeaderError`` or any other error): the
        pending records may never commit, so the speculative image is dropped. If
        the Raft node still leads, the caller resigns it, so that a new election
        (possibly of this node, in a new epoch) activates a controller again.
        """
        self._reset()

    def _reset(self) -> None:
        self._epoch = None
        self._ready = False
        self._noop_sent = False
        self._bootstrap_checked = False
        self._pending.clear()
        self._image = self._committed
        self._brokers.forget_sessions()
        self._rebalance.clear()

    def _emit(self, result: ControllerResult[T]) -> ControllerResult[T]:
        """``result``, its records now pending and in the speculative image."""
        if result.records:
            self._pending.extend(result.records)
            self._image = self._image.apply_all(result.records)
        return result

    # ---- periodic work ---------------------------------------------------------------------------

    def tick(self, now_ms: int) -> ControllerResult[None]:
        """The activation NoOp; once it committed, the bootstrap records (a log's first
        activation only); then fencing of brokers whose session expired, and every
        ``leader_imbalance_check_interval_ms`` the preferred-leader elections."""
        if self._epoch is None:
            return ControllerResult((), None)
        if not self._ready:
            if self._noop_sent:
                return ControllerResult((), None)
            self._noop_sent = True
            return self._emit(ControllerResult((NoOpRecord(),), None))
        if not self._bootstrap_checked:
            self._bootstrap_checked = True
            bootstrap = bootstrap_records(self._image, self._bootstrap)
            if bootstrap:
                return self._emit(ControllerResult(tuple(bootstrap), None))
        records = self._brokers.fence_expired(self._image, now_ms)
        if self._rebalance.due(now_ms):
            percentage = self.config.leader_imbalance_per_broker_percentage
            records.extend(elect_preferred(self._image.apply_all(records), percentage))
        return self._emit(ControllerResult(tuple(records), None))

    def next_deadline_ms(self, now_ms: int) -> int | None:
        """When :meth:`tick` has work next (None: nothing until a request or a leader change)."""
        if self._epoch is None:
            return None
        if not self._ready:
            return None if self._noop_sent else now_ms
        if not self._bootstrap_checked:
            return now_ms
        deadlines = self._brokers.session_ends_ms(self._image, now_ms)
        rebalance_ms = self._rebalance.next_ms(now_ms)
        if rebalance_ms is not None:
            deadlines.append(rebalance_ms)
        return min(deadlines, default=None)

    # ---- brokers (brokers.py) --------------------------------------------------------------------

    def register_broker(
        self, request: BrokerRegistration, now_ms: int
    ) -> ControllerResult[RegistrationReply]:
        """BrokerRegistration (API 62)."""
        if not self.is_active:
            return ControllerResult((), RegistrationReply(NOT_CONTROLLER))
        return self._emit(
            self._brokers.register(self._image, self._committed.end_offset, request, now_ms)
        )

    def heartbeat(self, request: BrokerHeartbeat, now_ms: int) -> ControllerResult[HeartbeatReply]:
        """BrokerHeartbeat (API 63)."""
        if not self.is_active:
            return ControllerResult((), HeartbeatReply(NOT_CONTROLLER))
        return self._emit(self._brokers.heartbeat(self._image, request, now_ms))

    def connection_lost(self, broker_id: int, now_ms: int, refused: bool = False) -> None:
        """Evidence that ``broker_id`` may be gone: the connection that carried its last
        heartbeat closed, or (``refused``) its node refuses connections. Unless it
        heartbeats again, ``tick`` fences it about one ``broker.heartbeat.interval.ms``
        after its next heartbeat was due (after the refusal) instead of at the end of its
        session (``sessions.py``)."""
        if self.is_active:
            self._brokers.connection_lost(self._image, broker_id, now_ms, refused)

    def unregister_broker(self, broker_id: int) -> ControllerResult[int]:
        """UnregisterBroker (API 64): forget a broker (its partitions elect other leaders)."""
        if not self.is_active:
            return ControllerResult((), NOT_CONTROLLER)
        return self._emit(self._brokers.unregister(self._image, broker_id))

    # ---- topics (topic_admin.py) -----------------------------------------------------------------

    def create_topics(
        self, topics: Iterable[NewTopic], now_ms: int, validate_only: bool = False
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """CreateTopics: one outcome per topic, records for those that can be created."""
        return self._per_topic(create_topics_request(topics, self.config, self._rng), validate_only)

    def create_partitions(
        self, requests: Iterable[NewPartitions], now_ms: int, validate_only: bool = False
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """CreatePartitions: one outcome per topic, records for those that can grow."""
        return self._per_topic(create_partitions_request(requests, self._rng), validate_only)

    def alter_topic_configs(
        self, changes: Iterable[TopicConfigChange], validate_only: bool = False
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """IncrementalAlterConfigs of topics."""
        return self._per_topic(alter_topic_configs_request(changes), validate_only)

    def delete_topics(
        self, names: Iterable[str], now_ms: int
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """DeleteTopics by name."""
        return self._per_topic(delete_topics_request(names), validate_only=False)

    def _per_topic(
        self, request: PerTopicRequest, validate_only: bool
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        if not self.is_active:
            return ControllerResult((), request.refused(NOT_CONTROLLER))
        return self._emit(request.decide(self._image, validate_only))

    # ---- ACLs (acls.py) and SCRAM credentials (scram.py) ---------------------------------------

    def create_acls(self, bindings: Sequence[AclBinding]) -> ControllerResult[bool]:
        """CreateAcls: records for the bindings not there yet; False when not active."""
        if not self.is_active:
            return ControllerResult((), False)
        records = create_acl_records(self._image, bindings, self._rng)
        return self._emit(ControllerResult(tuple(records), True))

    def delete_acls(
        self, filters: Sequence[AclFilter]
    ) -> ControllerResult[list[list[AclBinding]] | None]:
        """DeleteAcls: per filter the bindings removed; None when not active."""
        if not self.is_active:
            return ControllerResult((), None)
        matched, records = delete_acl_records(self._image, filters)
        return self._emit(ControllerResult(tuple(records), matched))

    def alter_scram(
        self,
        deletions: Sequence[tuple[str, int]],
        upsertions: Sequence[UserScramCredentialRecord],
    ) -> ControllerResult[bool]:
        """AlterUserScramCredentials (checked by the broker); False when not active."""
        if not self.is_active:
            return ControllerResult((), False)
        records = scram_records(self._image, deletions, upsertions)
        return self._emit(ControllerResult(tuple(records), True))

    # ---- partitions (alter_partition.py) and producer ids (producer_ids.py) ----------------------

    def alter_partition(
        self,
        broker_id: int,
        broker_epoch: int,
        changes: Iterable[IsrChange],
        api_version: int = 3,
    ) -> ControllerResult[AlterPartitionReply]:
        """AlterPartition (API 56): a leader's ISR changes."""
        if not self.is_active:
            return ControllerResult((), AlterPartitionReply(NOT_CONTROLLER))
        return self._emit(
            alter_partition_result(
                self._image, self.config, broker_id, broker_epoch, changes, api_version
            )
        )

    def alter_isr(
        self, broker_id: int, broker_epoch: int, state: PartitionState, new_isr: tuple[int, ...]
    ) -> ControllerResult[PartitionState | int]:
        """One partition's ISR change in the shape of the replica manager's
        ``AlterPartitionSender.alter_isr``: the new state, or an error code."""
        result = self.alter_partition(broker_id, broker_epoch, [IsrChange.of(state, new_isr)])
        reply = result.response
        if reply.error_code != NONE:
            return ControllerResult(result.records, reply.error_code)
        (outcome,) = reply.partitions
        answer = outcome.state if outcome.state is not None else outcome.error_code
        return ControllerResult(result.records, answer)

    def allocate_producer_ids(
        self, broker_id: int, broker_epoch: int
    ) -> ControllerResult[ProducerIdBlock]:
        """AllocateProducerIds (API 67): the next block of ids for one broker."""
        if not self.is_active:
            return ControllerResult((), ProducerIdBlock(NOT_CONTROLLER))
        block_size = self.config.producer_id_block_size
        return self._emit(
            allocate_producer_ids_result(self._image, broker_id, broker_epoch, block_size)
        )
