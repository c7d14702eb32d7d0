"""Lost-connection evidence: fencing sooner than the session timeout (``sessions.py``)."""

from __future__ import annotations

import uuid

from log_engine.controller import BrokerRegistration
from log_engine.controller.sessions import BrokerSessions
from log_engine.errors import ErrorCode
from log_engine.metadata.records import Endpoint
from tests.unit.controller.harness import Harness

SESSION_MS = 30_000
INTERVAL_MS = 500


def _cluster() -> Harness:
    h = Harness(
        broker_session_timeout_ms=SESSION_MS,
        broker_heartbeat_interval_ms=INTERVAL_MS,
        auto_leader_rebalance_enable=False,
    )
    h.start_brokers(1, 2, 3)
    h.create("orders", factor=3)
    return h


def test_a_lost_connection_fences_one_interval_after_the_next_heartbeat_was_due() -> None:
    h = _cluster()
    leader = h.state("orders").leader
    h.advance(100)
    h.controller.connection_lost(leader, h.now_ms)  # the last heartbeat was 100 ms ago
    # next heartbeat due at contact + 500, one more interval of grace: contact + 1000
    assert h.controller.next_deadline_ms(h.now_ms) == h.now_ms - 100 + 2 * INTERVAL_MS
    h.advance(2 * INTERVAL_MS - 100 - 1)
    assert not h.image.brokers[leader].fenced
    h.advance(1)
    assert h.image.brokers[leader].fenced
    assert h.state("orders").leader not in (leader, -1)


def test_evidence_later_than_the_due_heartbeat_counts_from_the_evidence() -> None:
    h = _cluster()
    broker = 2
    h.advance(800)
    h.controller.connection_lost(broker, h.now_ms)
    assert h.controller.next_deadline_ms(h.now_ms) == h.now_ms + INTERVAL_MS


def test_a_heartbeat_after_the_loss_keeps_the_broker_unfenced() -> None:
    h = _cluster()
    leader = h.state("orders").leader
    h.controller.connection_lost(leader, h.now_ms)
    h.advance(INTERVAL_MS + 50)  # reconnected and heartbeat when due
    h.heartbeat(leader)
    h.advance(SESSION_MS - 1)
    assert not h.image.brokers[leader].fenced
    assert h.state("orders").leader == leader


def test_a_broker_fenced_by_mistake_is_unfenced_by_its_next_heartbeat() -> None:
    h = _cluster()
    leader = h.state("orders").leader
    h.controller.connection_lost(leader, h.now_ms)
    h.advance(2 * INTERVAL_MS)
    assert h.image.brokers[leader].fenced
    assert not h.heartbeat(leader).is_fenced
    assert not h.image.brokers[leader].fenced


def test_evidence_is_ignored_for_unknown_brokers_and_by_a_follower() -> None:
    h = _cluster()
    h.controller.connection_lost(9, h.now_ms)
    h.advance(2 * INTERVAL_MS)
    assert sorted(h.image.brokers) == [1, 2, 3]
    h.controller.renounce()
    h.controller.connection_lost(1, h.now_ms)  # not the active controller: nothing
    assert h.controller.next_deadline_ms(h.now_ms) is None


def test_evidence_does_not_let_another_incarnation_take_the_id_sooner() -> None:
    h = _cluster()
    h.controller.connection_lost(1, h.now_ms)
    h.advance(2 * INTERVAL_MS)
    assert h.image.brokers[1].fenced
    request = BrokerRegistration(1, uuid.UUID(int=77), (Endpoint("PLAINTEXT", "localhost", 1),))
    reply = h.commit(h.controller.register_broker(request, h.now_ms))
    assert reply.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    h.advance(SESSION_MS)
    h.register(1, incarnation=77)


def test_sessions_without_evidence_follow_the_session_timeout() -> None:
    sessions = BrokerSessions(SESSION_MS, INTERVAL_MS)
    assert sessions.end_ms(1, 100) == 100 + SESSION_MS + 1
    sessions.connection_lost(1, 150)  # before the next heartbeat was due (at 600)
    assert sessions.end_ms(1, 200) == 100 + 2 * INTERVAL_MS
    sessions.connection_lost(1, 900)  # the first evidence since the heartbeat counts
    assert sessions.end_ms(1, 900) == 100 + 2 * INTERVAL_MS
    sessions.heard(1, 500)
    assert sessions.lost_since_ms(1) is None
    assert sessions.end_ms(1, 600) == 500 + SESSION_MS + 1


def test_a_refusing_node_is_fenced_one_interval_after_the_refusal() -> None:
    h = _cluster()
    leader = h.state("orders").leader
    h.advance(100)
    h.controller.connection_lost(leader, h.now_ms)
    h.controller.connection_lost(leader, h.now_ms, refused=True)
    assert h.controller.next_deadline_ms(h.now_ms) == h.now_ms + INTERVAL_MS
    h.advance(INTERVAL_MS)
    assert h.image.brokers[leader].fenced


def test_a_heartbeat_after_a_refusal_clears_it() -> None:
    h = _cluster()
    h.controller.connection_lost(2, h.now_ms, refused=True)
    h.advance(INTERVAL_MS - 1)
    h.heartbeat(2)
    h.advance(SESSION_MS - 1)
    assert not h.image.brokers[2].fenced
