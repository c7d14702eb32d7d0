"""``BrokerLifecycle``: registration, heartbeats, fencing and unregistration of brokers.

Kafka's ClusterControlManager / BrokerHeartbeatManager, decided on the active
controller's speculative image (the controller checks that it is active and
keeps the records it is given back as pending):

- registration: INCONSISTENT_CLUSTER_ID for another cluster's broker;
  DUPLICATE_BROKER_REGISTRATION while another incarnation of the id still has
  a live session; otherwise a RegisterBrokerRecord with a new broker epoch,
  fenced, and the broker is taken out of ISRs and leaderships;
- heartbeat: STALE_BROKER_EPOCH for an unknown epoch; a fenced broker whose
  ``current_metadata_offset`` reached its registration record is unfenced
  (and leads partitions that had no leader); ``want_fence`` fences;
  ``want_shut_down`` starts a controlled shutdown (leaderships and ISR seats
  move away), then answers ``should_shut_down`` once the broker has seen that
  and leads nothing, fencing it;
- the controller's ``tick`` (:meth:`BrokerLifecycle.fence_expired`): an
  unfenced broker without a heartbeat for ``broker.session.timeout.ms`` is
  fenced; its partitions elect new leaders (``elections.py``). Sooner after lost-connection evidence
  (:meth:`BrokerLifecycle.connection_lost`, rule in ``sessions.py``);
- unregistration: the broker is fenced if it was not, then forgotten.
"""

from __future__ import annotations

from functools import partial

from log_engine.controller.config import ControllerConfig
from log_engine.controller.elections import elect_leaderless, remove_broker
from log_engine.controller.results import (
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerResult,
    HeartbeatReply,
    RegistrationReply,
)
from log_engine.controller.sessions import BrokerSessions
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataUpdate
from log_engine.metadata.records import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    MetadataRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)

NONE = int(ErrorCode.NONE)
STALE_BROKER_EPOCH = int(ErrorCode.STALE_BROKER_EPOCH)


def current_registration(
    image: MetadataImage, broker_id: int, broker_epoch: int
) -> RegisterBrokerRecord | None:
    """The broker's registration if ``broker_epoch`` is its current epoch (else a request
    from it gets STALE_BROKER_EPOCH)."""
    registration = image.registrations.get(broker_id)
    if registration is None or registration.broker_epoch != broker_epoch:
        return None
    return registration


class BrokerLifecycle:
    """The brokers' sessions and the metadata offsets their heartbeats are checked against."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        self._sessions = BrokerSessions(
            config.broker_session_timeout_ms, config.broker_heartbeat_interval_ms
        )
        self._last_broker_epoch = 0
        self._registration_offset: dict[int, int] = {}
        self._shutdown_offset: dict[int, int] = {}

    def forget_sessions(self) -> None:
        """This controller stopped leading: its next activation gives every broker a full
        session."""
        self._sessions.clear()

    # ---- what committed --------------------------------------------------------------------------

    def learn_offsets_from_image(self, image: MetadataImage) -> None:
        """Registrations inside a snapshot: their offsets are at most its last one."""
        for broker_id in image.registrations:
            self._registration_offset[broker_id] = image.end_offset - 1
        self._last_broker_epoch = max(self._last_broker_epoch, image.end_offset)

    def on_update(self, update: MetadataUpdate) -> None:
        """Note where registrations and controlled shutdowns committed."""
        if update.snapshot:
            self.learn_offsets_from_image(update.image)
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

    # ---- decisions -------------------------------------------------------------------------------

    def register(
        self,
        image: MetadataImage,
        committed_end_offset: int,
        request: BrokerRegistration,
        now_ms: int,
    ) -> ControllerResult[RegistrationReply]:
        """BrokerRegistration (API 62)."""
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
        existing = image.registrations.get(request.broker_id)
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
        epoch = self._next_broker_epoch(image, committed_end_offset)
        register = RegisterBrokerRecord(
            request.broker_id,
            request.incarnation_id,
            epoch,
            request.endpoints,
            request.rack,
            fenced=True,
        )
        after = image.apply(register)
        records: list[MetadataRecord] = [register]
        records.extend(remove_broker(after, request.broker_id, self._unclean(image)))
        self._sessions.heard(request.broker_id, now_ms)
        return ControllerResult(tuple(records), RegistrationReply(NONE, epoch))

    def heartbeat(
        self, image: MetadataImage, request: BrokerHeartbeat, now_ms: int
    ) -> ControllerResult[HeartbeatReply]:
        """BrokerHeartbeat (API 63)."""
        broker_id = request.broker_id
        registration = current_registration(image, broker_id, request.broker_epoch)
        if registration is None:
            return ControllerResult((), HeartbeatReply(STALE_BROKER_EPOCH))
        self._sessions.heard(broker_id, now_ms)
        registered_at = self._registration_offset.get(broker_id)
        caught_up = registered_at is not None and request.current_metadata_offset >= registered_at
        unclean = self._unclean(image)
        epoch = registration.broker_epoch
        records: list[MetadataRecord] = []
        fenced, shut_down = registration.fenced, False
        if request.want_shut_down:
            if registration.fenced:
                shut_down = True
            elif not registration.in_controlled_shutdown:
                change = BrokerRegistrationChangeRecord(broker_id, epoch, in_controlled_shutdown=1)
                records = [change, *remove_broker(image.apply(change), broker_id, unclean)]
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
            records = [unfence, *elect_leaderless(after, broker_id, unclean)]
            fenced = False
        return ControllerResult(tuple(records), HeartbeatReply(NONE, caught_up, fenced, shut_down))

    def connection_lost(
        self, image: MetadataImage, broker_id: int, now_ms: int, refused: bool
    ) -> None:
        """Evidence that ``broker_id`` may be gone (``sessions.py``); ignored for a node
        that is not a registered broker."""
        if broker_id in image.registrations:
            if refused:
                self._sessions.node_refused(broker_id, now_ms)
            else:
                self._sessions.connection_lost(broker_id, now_ms)

    def unregister(self, image: MetadataImage, broker_id: int) -> ControllerResult[int]:
        """UnregisterBroker (API 64): forget a broker (its partitions elect other leaders)."""
        registration = image.registrations.get(broker_id)
        if registration is None:
            return ControllerResult((), int(ErrorCode.BROKER_ID_NOT_REGISTERED))
        records: list[MetadataRecord] = []
        if not registration.fenced:
            records = self._fence(image, broker_id)
        records.append(UnregisterBrokerRecord(broker_id, registration.broker_epoch))
        self._sessions.forget(broker_id)
        return ControllerResult(tuple(records), NONE)

    def fence_expired(self, image: MetadataImage, now_ms: int) -> list[MetadataRecord]:
        """The records fencing every unfenced broker whose session is over."""
        records: list[MetadataRecord] = []
        for broker_id in sorted(image.registrations):
            if image.registrations[broker_id].fenced:
                continue
            if not self._sessions.live(broker_id, now_ms):
                fenced = self._fence(image, broker_id)
                image = image.apply_all(fenced)
                records.extend(fenced)
        return records

    def session_ends_ms(self, image: MetadataImage, now_ms: int) -> list[int]:
        """When the session of each unfenced broker ends."""
        registrations = image.registrations
        return [self._sessions.end_ms(b, now_ms) for b, r in registrations.items() if not r.fenced]

    # ---- helpers ---------------------------------------------------------------------------------

    def _unclean(self, image: MetadataImage) -> partial[bool]:
        return partial(self.config.topic_unclean_leader_election_enable, image)

    def _next_broker_epoch(self, image: MetadataImage, committed_end_offset: int) -> int:
        """Grows with the metadata log: above every epoch given and the committed offset."""
        highest = max((r.broker_epoch for r in image.registrations.values()), default=0)
        epoch = max(self._last_broker_epoch, highest, committed_end_offset) + 1
        self._last_broker_epoch = epoch
        return epoch

    def _fence(self, image: MetadataImage, broker_id: int) -> list[MetadataRecord]:
        registration = image.registrations[broker_id]
        fence = FenceBrokerRecord(broker_id, registration.broker_epoch)
        after = image.apply(fence)
        return [fence, *remove_broker(after, broker_id, self._unclean(image))]
