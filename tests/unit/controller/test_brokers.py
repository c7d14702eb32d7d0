"""Broker registration, heartbeats, fencing and controlled shutdown."""

from __future__ import annotations

import random
import uuid

from log_engine.controller import (
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerConfig,
    QuorumController,
)
from log_engine.errors import ErrorCode
from log_engine.metadata.listener import MetadataListener
from log_engine.metadata.records import NoOpRecord
from log_engine.metadata.types import NO_LEADER
from log_engine.replication.raft.types import LeaderAndEpoch
from tests.unit.controller.harness import Harness

SESSION_MS = 9000


def test_requests_before_activation_get_not_controller() -> None:
    listener = MetadataListener()
    controller = QuorumController(ControllerConfig(node_id=0), random.Random(0))
    controller.attach(listener)
    request = BrokerRegistration(1, uuid.UUID(int=1), ())
    assert controller.register_broker(request, 0).response.error_code == ErrorCode.NOT_CONTROLLER
    assert controller.tick(0).records == ()  # not the leader: nothing to do
    listener.handle_leader_change(LeaderAndEpoch(0, 3))
    assert controller.is_leader and not controller.is_active
    assert controller.tick(0).records == (NoOpRecord(),)
    assert controller.tick(1).records == ()  # one NoOp at a time
    result = controller.register_broker(request, 0)
    assert result.records == () and result.response.error_code == ErrorCode.NOT_CONTROLLER


def test_registration_gives_a_growing_epoch_and_starts_fenced() -> None:
    h = Harness()
    first = h.register(1)
    second = h.register(2)
    assert 0 < first < second
    assert h.image.brokers[1].fenced and h.image.brokers[1].epoch == first
    assert h.image.brokers[1].endpoint("PLAINTEXT").port == 9091  # type: ignore[union-attr]
    again = h.register(1)  # the same incarnation registers again: a new epoch
    assert again > second


def test_unfenced_only_once_caught_up_to_its_registration() -> None:
    h = Harness()
    h.register(1)
    registered_at = h.offset - 1
    reply = h.heartbeat(1, offset=registered_at - 1)
    assert (reply.error_code, reply.is_caught_up, reply.is_fenced) == (0, False, True)
    assert h.image.brokers[1].fenced
    reply = h.heartbeat(1, offset=registered_at)
    assert (reply.is_caught_up, reply.is_fenced) == (True, False)
    assert not h.image.brokers[1].fenced


def test_heartbeat_with_an_old_epoch_is_stale() -> None:
    h = Harness()
    epoch = h.register(1)
    h.register(1)
    reply = h.commit(h.controller.heartbeat(BrokerHeartbeat(1, epoch, 100), 0))
    assert reply.error_code == ErrorCode.STALE_BROKER_EPOCH
    reply = h.commit(h.controller.heartbeat(BrokerHeartbeat(7, 1, 100), 0))
    assert reply.error_code == ErrorCode.STALE_BROKER_EPOCH


def test_second_incarnation_is_refused_while_the_first_one_lives() -> None:
    h = Harness()
    h.register(1, incarnation=100)
    request = BrokerRegistration(1, uuid.UUID(int=200), ())
    reply = h.commit(h.controller.register_broker(request, h.now_ms + SESSION_MS))
    assert reply.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    assert "another live process" in (reply.error_message or "")
    reply = h.commit(h.controller.register_broker(request, h.now_ms + SESSION_MS + 1))
    assert reply.error_code == ErrorCode.NONE
    assert h.image.registrations[1].incarnation_id == uuid.UUID(int=200)


def test_wrong_cluster_id_is_refused() -> None:
    h = Harness(cluster_id="abc")
    request = BrokerRegistration(1, uuid.UUID(int=1), (), cluster_id="xyz")
    reply = h.commit(h.controller.register_broker(request, 0))
    assert reply.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert "'xyz'" in (reply.error_message or "")


def test_session_timeout_fences_and_moves_leadership_to_the_next_isr_member() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("orders", factor=3)
    before = h.state("orders")
    h.advance(SESSION_MS // 2)
    for b in (1, 2, 3):
        if b != before.leader:
            h.heartbeat(b)
    h.advance(SESSION_MS // 2 + 1)  # the leader's session is over; the others' is not
    after = h.state("orders")
    assert h.image.brokers[before.leader].fenced
    assert after.leader == next(r for r in before.replicas if r != before.leader)
    assert after.isr == tuple(r for r in before.isr if r != before.leader)
    assert after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1


def test_last_isr_member_fenced_leaves_no_leader_until_it_returns() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", factor=2)
    state = h.state("t")
    a, b = state.replicas
    h.commit(h.controller.heartbeat(_hb(h, b, want_fence=True), h.now_ms))
    assert h.state("t").isr == (a,) and h.state("t").leader == a
    h.commit(h.controller.heartbeat(_hb(h, a, want_fence=True), h.now_ms))
    state = h.state("t")
    assert state.leader == NO_LEADER and state.isr == (a,)  # the ISR never empties
    assert h.heartbeat(b).is_fenced is False  # b is back, but not in the ISR
    assert h.state("t").leader == NO_LEADER
    h.heartbeat(a)  # the last ISR member is back: it leads again
    state = h.state("t")
    assert state.leader == a and state.leader_epoch == 2


def test_unclean_election_picks_a_live_replica_and_warns(caplog) -> None:  # type: ignore[no-untyped-def]
    h = Harness(unclean_leader_election_enable=True)
    h.start_brokers(1, 2)
    h.create("t", factor=2)
    a, b = h.state("t").replicas
    h.commit(h.controller.heartbeat(_hb(h, b, want_fence=True), h.now_ms))
    with caplog.at_level("WARNING"):
        h.commit(h.controller.heartbeat(_hb(h, a, want_fence=True), h.now_ms))
        assert h.state("t").leader == NO_LEADER
        h.heartbeat(b)
    state = h.state("t")
    assert state.leader == b and state.isr == (b,)
    assert "unclean leader election" in caplog.text


def test_topic_config_overrides_unclean_election() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", factor=2, configs={"unclean.leader.election.enable": "true"})
    a, b = h.state("t").replicas
    h.commit(h.controller.heartbeat(_hb(h, b, want_fence=True), h.now_ms))
    h.commit(h.controller.heartbeat(_hb(h, a, want_fence=True), h.now_ms))
    h.heartbeat(b)
    assert h.state("t").leader == b


def test_controlled_shutdown_moves_leadership_then_lets_the_broker_go() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("t", partitions=3, factor=2)
    leaders = {h.state("t", p).leader for p in range(3)}
    victim = sorted(leaders)[0]
    reply = h.heartbeat(victim, want_shut_down=True)
    assert (reply.should_shut_down, reply.is_fenced) == (False, False)
    assert h.image.registrations[victim].in_controlled_shutdown
    for p in range(3):
        state = h.state("t", p)
        assert state.leader != victim and victim not in state.isr
    reply = h.heartbeat(victim, offset=0, want_shut_down=True)  # has not seen the moves yet
    assert reply.should_shut_down is False
    reply = h.heartbeat(victim, want_shut_down=True)
    assert (reply.should_shut_down, reply.is_fenced) == (True, True)
    assert h.image.brokers[victim].fenced


def test_unregister_fences_first() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.create("t", factor=2)
    leader = h.state("t").leader
    assert h.commit(h.controller.unregister_broker(leader)) == 0
    assert leader not in h.image.brokers
    assert h.state("t").leader != leader
    assert h.commit(h.controller.unregister_broker(leader)) == ErrorCode.BROKER_ID_NOT_REGISTERED


def test_losing_leadership_drops_pending_records() -> None:
    h = Harness()
    h.register(1)
    result = h.controller.register_broker(BrokerRegistration(2, uuid.UUID(int=2), ()), 0)
    assert 2 in h.controller.image.registrations and 2 not in h.image.registrations
    h.listener.handle_leader_change(LeaderAndEpoch(5, 2))
    assert not h.controller.is_leader and h.controller.pending_records == 0
    assert 2 not in h.controller.image.registrations
    assert result.records  # what the caller failed to append is simply lost


def test_next_deadline_is_the_earliest_session_end_or_leader_check() -> None:
    h = Harness(auto_leader_rebalance_enable=False)
    h.start_brokers(1)
    assert h.controller.next_deadline_ms(h.now_ms) == h.now_ms + SESSION_MS + 1
    h = Harness(leader_imbalance_check_interval_ms=500)
    h.start_brokers(1)
    assert h.controller.next_deadline_ms(h.now_ms) == h.now_ms  # to arm the check
    h.advance(0)
    assert h.controller.next_deadline_ms(h.now_ms) == h.now_ms + 500


def test_preferred_leaders_come_back_at_the_next_check() -> None:
    h = Harness(leader_imbalance_check_interval_ms=60_000, broker_session_timeout_ms=10**6)
    h.start_brokers(1, 2, 3)
    h.create("t", -1, -1, assignments={0: (1, 2, 3), 1: (1, 3, 2), 2: (2, 3, 1)})
    h.advance(0)  # arms the check
    h.heartbeat(1, want_fence=True)
    assert (h.state("t", 0).leader, h.state("t", 1).leader) == (2, 3)
    h.heartbeat(1)
    assert h.state("t", 0).isr == (2, 3)  # not back in the ISR yet: stays
    for p, isr in ((0, (2, 3, 1)), (1, (3, 2, 1))):
        state = h.state("t", p)
        leader_epoch = h.image.registrations[state.leader].broker_epoch
        h.commit(h.controller.alter_isr(state.leader, leader_epoch, state, isr))
    for b in (1, 2, 3):
        h.heartbeat(b)
    h.advance(30_000)
    assert h.state("t", 0).leader == 2  # before the check
    for b in (1, 2, 3):
        h.heartbeat(b)
    h.advance(30_000)
    assert (h.state("t", 0).leader, h.state("t", 1).leader, h.state("t", 2).leader) == (1, 1, 2)
    assert h.state("t", 0).leader_epoch == 2


def test_no_preferred_leader_moves_when_disabled() -> None:
    h = Harness(auto_leader_rebalance_enable=False, leader_imbalance_check_interval_ms=1)
    h.start_brokers(1, 2)
    h.create("t", -1, -1, assignments={0: (1, 2)})
    h.heartbeat(1, want_fence=True)
    h.heartbeat(1)
    state = h.state("t")
    h.commit(h.controller.alter_isr(2, h.image.registrations[2].broker_epoch, state, (2, 1)))
    h.advance(10)
    h.advance(10)
    assert h.state("t").leader == 2


def _hb(h: Harness, broker_id: int, **kw: bool) -> BrokerHeartbeat:
    epoch = h.image.registrations[broker_id].broker_epoch
    return BrokerHeartbeat(broker_id, epoch, h.image.end_offset - 1, **kw)


def test_renounce_after_a_failed_append_drops_pending_until_elected_again() -> None:
    h = Harness()
    h.controller.register_broker(BrokerRegistration(2, uuid.UUID(int=2), ()), 0)
    h.controller.renounce()
    assert not h.controller.is_leader and h.controller.pending_records == 0
    assert 2 not in h.controller.image.registrations
    request = BrokerRegistration(3, uuid.UUID(int=3), ())
    assert h.controller.register_broker(request, 0).response.error_code == ErrorCode.NOT_CONTROLLER
    h.epoch = 2
    h.listener.handle_leader_change(LeaderAndEpoch(0, 2))
    h.commit(h.controller.tick(0))
    assert h.controller.is_active
