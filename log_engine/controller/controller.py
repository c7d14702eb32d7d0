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

Brokers (Kafka's ClusterControlManager / BrokerHeartbeatManager):

- registration: DUPLICATE_BROKER_REGISTRATION while another incarnation of the
  id still has a live session; otherwise a RegisterBrokerRecord with a new
  broker epoch, fenced, and the broker is taken out of ISRs and leaderships;
- heartbeat: STALE_BROKER_EPOCH for an unknown epoch; a fenced broker whose
  ``current_metadata_offset`` reached its registration record is unfenced
  (and leads partitions that had no leader); ``want_fence`` fences;
  ``want_shut_down`` starts a controlled shutdown (leaderships and ISR seats
  move away), then answers ``should_shut_down`` once the broker has seen that
  and leads nothing, fencing it;
- ``tick``: an unfenced broker without a heartbeat for
  ``broker.session.timeout.ms`` is fenced; its partitions elect new leaders
  (``elections.py``). Sooner after lost-connection evidence
  (:meth:`connection_lost`, rule in ``sessions.py``).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from log_engine.acls import AclBinding, AclFilter
from log_engine.controller.acls import create_acl_records, delete_acl_records
from log_engine.controller.alter_partition import validate_isr_change
from log_engine.controller.config import ControllerConfig
from log_engine.controller.elections import elect_leaderless, elect_preferred, remove_broker
from log_engine.controller.partitions import create_partition_records
from log_engine.controller.results import (
    AlterPartitionReply,
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerResult,
    HeartbeatReply,
    IsrChange,
    NewPartitions,
    NewTopic,
    PartitionOutcome,
    ProducerIdBlock,
    RegistrationReply,
    TopicConfigChange,
    TopicOutcome,
)
from log_engine.controller.scram import scram_records
from log_engine.controller.sessions import BrokerSessions
from log_engine.controller.topic_configs import alter_config_records
from log_engine.controller.topics import (
    TopicRefused,
    create_topic_records,
    delete_topic_records,
    refusal,
)
from log_engine.errors import ErrorCode
from log_engine.invariants import check
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.metadata.records import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionChangeRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
)
from log_engine.metadata.types import PartitionState
from log_engine.replication.raft.types import LeaderAndEpoch

T = TypeVar("T")
NONE = int(ErrorCode.NONE)
NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)
STALE_BROKER_EPOCH = int(ErrorCode.STALE_BROKER_EPOCH)


class QuorumController:
    """The controller logic of one voter; it decides only while it is the active leader."""

    def __init__(
        self,
        config: ControllerConfig,
        rng: random.Random,
        image: MetadataImage = MetadataImage.EMPTY,
    ) -> None:
        self.config = config
        self._rng = rng
        self._committed = image
        self._image = image
        self._pending: deque[MetadataRecord] = deque()
        self._epoch: int | None = None  # the epoch this node leads, if it does
        self._ready = False
        self._noop_sent = False
        self._sessions = BrokerSessions(
            config.broker_session_timeout_ms, config.broker_heartbeat_interval_ms
        )
        self._rebalance_at_ms: int | None = None  # the next preferred-leader check
        self._last_broker_epoch = 0
        self._registration_offset: dict[int, int] = {}
        self._shutdown_offset: dict[int, int] = {}
        self._learn_offsets_from_image(image)

    def attach(self, listener: MetadataListener) -> None:
        """Follow ``listener``'s commits and leader changes from its current image on."""
        self._committed = self._image = listener.image
        self._learn_offsets_from_image(listener.image)
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
        if update.snapshot:
            self._learn_offsets_from_image(update.image)
        for committed in update.records:
            record = committed.record
            if isinstance(record, RegisterBrokerRecord):
                self._registration_offset[record.broker_id] = committed.offset
                self._shutdown_offset.pop(record.broker_id, None)  # a new registration
            elif (
                isinstance(record, BrokerRegistrationChangeRecord)
                and record.in_controlled_shutdown == 1
            ):
                self._shutdown_offset[record.broker_id] = committed.offset
            if self._epoch is not None and committed.epoch == self._epoch:
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
        self._pending.clear()
        self._image = self._committed
        self._sessions.clear()
        self._rebalance_at_ms = None

    def _learn_offsets_from_image(self, image: MetadataImage) -> None:
        """Registrations inside a snapshot: their offsets are at most its last one."""
        for broker_id in image.registrations:
            self._registration_offset[broker_id] = image.end_offset - 1
        self._last_broker_epoch = max(self._last_broker_epoch, image.end_offset)

    # ---- helpers ---------------------------------------------------------------------------------

    def _emit(self, records: Sequence[MetadataRecord], response: T) -> ControllerResult[T]:
        if records:
            self._pending.extend(records)
            self._image = self._image.apply_all(records)
        return ControllerResult(tuple(records), response)

    def _unclean(self, topic: str) -> bool:
        value = self._image.topic_configs(topic).get("unclean.leader.election.enable")
        return self.config.unclean_leader_election_enable if value is None else value == "true"

    def min_insync_replicas(self, topic: str) -> int:
        value = self._image.topic_configs(topic).get("min.insync.replicas")
        return self.config.min_insync_replicas if value is None else int(value)


    def _next_broker_epoch(self) -> int:
        """Grows with the metadata log: above every epoch given and the committed offset."""
        highest = max((r.broker_epoch for r in self._image.registrations.values()), default=0)
        epoch = max(self._last_broker_epoch, highest, self._committed.end_offset) + 1
        self._last_broker_epoch = epoch
        return epoch

    def _fence(self, image: MetadataImage, broker_id: int) -> list[MetadataRecord]:
        registration = image.registrations[broker_id]
        fence = FenceBrokerRecord(broker_id, registration.broker_epoch)
        after = image.apply(fence)
        return [fence, *remove_broker(after, broker_id, self._unclean)]

    # ---- periodic work ---------------------------------------------------------------------------

    def tick(self, now_ms: int) -> ControllerResult[None]:
        """The activation NoOp; then fencing of brokers whose session expired, and every
        ``leader_imbalance_check_interval_ms`` the preferred-leader elections."""
        if self._epoch is None:
            return ControllerResult((), None)
        if not self._ready:
            if self._noop_sent:
                return ControllerResult((), None)
            self._noop_sent = True
            return self._emit([NoOpRecord()], None)
        records: list[MetadataRecord] = []
        image = self._image
        for broker_id in sorted(image.registrations):
            if image.registrations[broker_id].fenced:
                continue
            if not self._sessions.live(broker_id, now_ms):
                fenced = self._fence(image, broker_id)
                image = image.apply_all(fenced)
                records.extend(fenced)
        if self.config.auto_leader_rebalance_enable:
            interval_ms = self.config.leader_imbalance_check_interval_ms
            if self._rebalance_at_ms is None:
                self._rebalance_at_ms = now_ms + interval_ms
            elif now_ms >= self._rebalance_at_ms:
                self._rebalance_at_ms = now_ms + interval_ms
                percentage = self.config.leader_imbalance_per_broker_percentage
                records.extend(elect_preferred(image, percentage))
        return self._emit(records, None)

    def next_deadline_ms(self, now_ms: int) -> int | None:
        """When :meth:`tick` has work next (None: nothing until a request or a leader change)."""
        if self._epoch is None:
            return None
        if not self._ready:
            return None if self._noop_sent else now_ms
        deadlines = [
            self._sessions.end_ms(b, now_ms)
            for b, reg in self._image.registrations.items()
            if not reg.fenced
        ]
        if self.config.auto_leader_rebalance_enable:
            deadlines.append(now_ms if self._rebalance_at_ms is None else self._rebalance_at_ms)
        return min(deadlines, default=None)

    # ---- brokers ---------------------------------------------------------------------------------

    def register_broker(
        self, request: BrokerRegistration, now_ms: int
    ) -> ControllerResult[RegistrationReply]:
        """BrokerRegistration (API 62)."""
        if not self.is_active:
            return ControllerResult((), RegistrationReply(NOT_CONTROLLER))
        if self.config.cluster_id is not None and request.cluster_id not in (
            None,
            self.config.cluster_id,
        ):
            message = (
                f"broker {request.broker_id} belongs to cluster {request.cluster_id!r}, "
                f"this controller to {self.config.cluster_id!r}"
            )
            return ControllerResult(
                (), RegistrationReply(int(ErrorCode.INCONSISTENT_CLUSTER_ID), -1, message)
            )
        existing = self._image.registrations.get(request.broker_id)
        if (
            existing is not None
            and existing.incarnation_id != request.incarnation_id
            and self._sessions.within_session_timeout(request.broker_id, now_ms)
        ):
            message = (
                f"broker id {request.broker_id} is registered by another live process "
                f"(incarnation {existing.incarnation_id}); it can register again once that "
                f"one's session of {self.config.broker_session_timeout_ms} ms has expired"
            )
            return ControllerResult(
                (), RegistrationReply(int(ErrorCode.DUPLICATE_BROKER_REGISTRATION), -1, message)
            )
        epoch = self._next_broker_epoch()
        register = RegisterBrokerRecord(
            request.broker_id,
            request.incarnation_id,
            epoch,
            request.endpoints,
            request.rack,
            fenced=True,
        )
        after = self._image.apply(register)
        records: list[MetadataRecord] = [register]
        records.extend(remove_broker(after, request.broker_id, self._unclean))
        self._sessions.heard(request.broker_id, now_ms)
        return self._emit(records, RegistrationReply(NONE, epoch))

    def heartbeat(self, request: BrokerHeartbeat, now_ms: int) -> ControllerResult[HeartbeatReply]:
        """BrokerHeartbeat (API 63)."""
        if not self.is_active:
            return ControllerResult((), HeartbeatReply(NOT_CONTROLLER))
        broker_id = request.broker_id
        registration = self._image.registrations.get(broker_id)
        if registration is None or registration.broker_epoch != request.broker_epoch:
            return ControllerResult((), HeartbeatReply(STALE_BROKER_EPOCH))
        self._sessions.heard(broker_id, now_ms)
        registered_at = self._registration_offset.get(broker_id)
        caught_up = registered_at is not None and request.current_metadata_offset >= registered_at
        image = self._image
        epoch = registration.broker_epoch
        records: list[MetadataRecord] = []
        fenced, shut_down = registration.fenced, False
        if request.want_shut_down:
            if registration.fenced:
                shut_down = True
            elif not registration.in_controlled_shutdown:
                change = BrokerRegistrationChangeRecord(broker_id, epoch, in_controlled_shutdown=1)
                records = [change, *remove_broker(image.apply(change), broker_id, self._unclean)]
            elif request.current_metadata_offset >= self._shutdown_offset.get(
                broker_id, 1 << 62
            ) and not any(s.leader == broker_id for s in image.partitions()):
                records, fenced, shut_down = self._fence(image, broker_id), True, True
        elif request.want_fence:
            if not registration.fenced:
                records, fenced = self._fence(image, broker_id), True
        elif registration.fenced and caught_up and not registration.in_controlled_shutdown:
            unfence = UnfenceBrokerRecord(broker_id, epoch)
            after = image.apply(unfence)
            records = [unfence, *elect_leaderless(after, broker_id, self._unclean)]
            fenced = False
        return self._emit(records, HeartbeatReply(NONE, caught_up, fenced, shut_down))

    def connection_lost(self, broker_id: int, now_ms: int, refused: bool = False) -> None:
        """Evidence that ``broker_id`` may be gone: the connection that carried its last
        heartbeat closed, or (``refused``) its node refuses connections. Unless it
        heartbeats again, ``tick`` fences it about one ``broker.heartbeat.interval.ms``
        after its next heartbeat was due (after the refusal) instead of at the end of its
        session (``sessions.py``)."""
        if self.is_active and broker_id in self._image.registrations:
            if refused:
                self._sessions.node_refused(broker_id, now_ms)
            else:
                self._sessions.connection_lost(broker_id, now_ms)

    def unregister_broker(self, broker_id: int) -> ControllerResult[int]:
        """UnregisterBroker (API 64): forget a broker (its partitions elect other leaders)."""
        if not self.is_active:
            return ControllerResult((), NOT_CONTROLLER)
        registration = self._image.registrations.get(broker_id)
        if registration is None:
            return ControllerResult((), int(ErrorCode.BROKER_ID_NOT_REGISTERED))
        records: list[MetadataRecord] = []
        if not registration.fenced:
            records = self._fence(self._image, broker_id)
        records.append(UnregisterBrokerRecord(broker_id, registration.broker_epoch))
        self._sessions.forget(broker_id)
        return self._emit(records, NONE)

    # ---- topics ----------------------------------------------------------------------------------

    def create_topics(
        self, topics: Iterable[NewTopic], now_ms: int, validate_only: bool = False
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """CreateTopics: one outcome per topic, records for those that can be created."""
        topics = list(topics)
        return self._per_topic(
            [t.name for t in topics],
            lambda image, i: create_topic_records(image, topics[i], self.config, self._rng),
            validate_only,
        )

    def create_partitions(
        self, requests: Iterable[NewPartitions], now_ms: int, validate_only: bool = False
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """CreatePartitions: one outcome per topic, records for those that can grow
        (rules: ``partitions.py``); a topic named twice is refused (INVALID_REQUEST)."""
        requests = list(requests)
        names = [r.name for r in requests]

        def grow(image: MetadataImage, i: int) -> tuple[TopicOutcome, list[MetadataRecord]]:
            if names.count(names[i]) > 1:
                raise TopicRefused(
                    ErrorCode.INVALID_REQUEST,
                    f"topic {names[i]!r} appears more than once in the request",
                )
            return create_partition_records(image, requests[i], self._rng)

        return self._per_topic(names, grow, validate_only)

    def alter_topic_configs(
        self, changes: Iterable[TopicConfigChange], validate_only: bool = False
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """IncrementalAlterConfigs of topics (rules: ``topic_configs.py``)."""
        changes = list(changes)
        return self._per_topic(
            [c.name for c in changes],
            lambda image, i: alter_config_records(image, changes[i]),
            validate_only,
        )

    def _per_topic(
        self,
        names: list[str],
        rule: Callable[[MetadataImage, int], tuple[TopicOutcome, list[MetadataRecord]]],
        validate_only: bool,
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """One outcome per topic of a request: ``rule(image, i)`` gives the i-th topic's
        records (or raises TopicRefused), checked on the image the earlier ones left."""
        if not self.is_active:
            return ControllerResult((), tuple(TopicOutcome(n, NOT_CONTROLLER) for n in names))
        image = self._image
        records: list[MetadataRecord] = []
        outcomes: list[TopicOutcome] = []
        for i, name in enumerate(names):
            try:
                outcome, new = rule(image, i)
            except TopicRefused as error:
                outcomes.append(refusal(name, error))
                continue
            outcomes.append(outcome)
            if not validate_only:
                image = image.apply_all(new)
                records.extend(new)
        return self._emit(records, tuple(outcomes))

    def delete_topics(
        self, names: Iterable[str], now_ms: int
    ) -> ControllerResult[tuple[TopicOutcome, ...]]:
        """DeleteTopics by name."""
        names = list(names)
        if not self.is_active:
            return ControllerResult((), tuple(TopicOutcome(n, NOT_CONTROLLER) for n in names))
        image = self._image
        records: list[MetadataRecord] = []
        outcomes: list[TopicOutcome] = []
        for name in names:
            try:
                outcome, topic_records = delete_topic_records(image, name)
            except TopicRefused as error:
                outcomes.append(refusal(name, error))
                continue
            outcomes.append(outcome)
            image = image.apply_all(topic_records)
            records.extend(topic_records)
        return self._emit(records, tuple(outcomes))

    # ---- ACLs (acls.py) and SCRAM credentials (scram.py) ---------------------------------------

    def create_acls(self, bindings: Sequence[AclBinding]) -> ControllerResult[bool]:
        """CreateAcls: records for the bindings not there yet; False when not active."""
        if not self.is_active:
            return ControllerResult((), False)
        return self._emit(create_acl_records(self._image, bindings, self._rng), True)

    def delete_acls(
        self, filters: Sequence[AclFilter]
    ) -> ControllerResult[list[list[AclBinding]] | None]:
        """DeleteAcls: per filter the bindings removed; None when not active."""
        if not self.is_active:
            return ControllerResult((), None)
        matched, records = delete_acl_records(self._image, filters)
        return self._emit(records, matched)

    def alter_scram(
        self,
        deletions: Sequence[tuple[str, int]],
        upsertions: Sequence[UserScramCredentialRecord],
    ) -> ControllerResult[bool]:
        """AlterUserScramCredentials (checked by the broker); False when not active."""
        if not self.is_active:
            return ControllerResult((), False)
        return self._emit(scram_records(self._image, deletions, upsertions), True)

    # ---- partitions ------------------------------------------------------------------------------

    def alter_partition(
        self,
        broker_id: int,
        broker_epoch: int,
        changes: Iterable[IsrChange],
        api_version: int = 3,
    ) -> ControllerResult[AlterPartitionReply]:
        """AlterPartition (API 56): a leader's ISR changes (rules: ``alter_partition.py``)."""
        if not self.is_active:
            return ControllerResult((), AlterPartitionReply(NOT_CONTROLLER))
        registration = self._image.registrations.get(broker_id)
        if registration is None or registration.broker_epoch != broker_epoch:
            return ControllerResult((), AlterPartitionReply(STALE_BROKER_EPOCH))
        image = self._image
        records: list[MetadataRecord] = []
        outcomes: list[PartitionOutcome] = []
        for change in changes:
            error = validate_isr_change(image, broker_id, change, api_version)
            if error != NONE:
                outcomes.append(PartitionOutcome(change.topic_id, change.partition, error))
                continue
            topic = image.topic_by_id(change.topic_id)
            assert topic is not None  # validated
            state = topic.partitions[change.partition]
            if change.new_isr != state.isr:
                record = PartitionChangeRecord(
                    change.topic_id, change.partition, isr=change.new_isr
                )
                image = image.apply(record)
                records.append(record)
                state = image.topics[topic.name].partitions[change.partition]
            under = len(state.isr) < self.min_insync_replicas(topic.name)
            outcomes.append(
                PartitionOutcome(change.topic_id, change.partition, NONE, state, under)
            )
        return self._emit(records, AlterPartitionReply(NONE, tuple(outcomes)))

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

    # ---- producer ids ----------------------------------------------------------------------------

    def allocate_producer_ids(
        self, broker_id: int, broker_epoch: int
    ) -> ControllerResult[ProducerIdBlock]:
        """AllocateProducerIds (API 67): the next block of ids for one broker."""
        if not self.is_active:
            return ControllerResult((), ProducerIdBlock(NOT_CONTROLLER))
        registration = self._image.registrations.get(broker_id)
        if registration is None or registration.broker_epoch != broker_epoch:
            return ControllerResult((), ProducerIdBlock(STALE_BROKER_EPOCH))
        start = self._image.next_producer_id
        size = self.config.producer_id_block_size
        record = ProducerIdsRecord(broker_id, broker_epoch, start + size)
        return self._emit([record], ProducerIdBlock(NONE, start, size))
