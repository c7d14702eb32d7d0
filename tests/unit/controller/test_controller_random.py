"""Random operations against the controller; the invariants of the committed image after each.

Seeded: a failure names its seed, and the same seed replays the same run.
"""

from __future__ import annotations

import random
import uuid

import pytest

from log_engine.controller import BrokerHeartbeat, BrokerRegistration, IsrChange, NewTopic
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataUpdate
from log_engine.metadata.records import Endpoint, decode_record, encode_record
from log_engine.metadata.snapshot import encode_snapshot, load_snapshot
from log_engine.metadata.types import NO_LEADER
from tests.unit.controller.harness import Harness

BROKERS = range(1, 6)


def step(h: Harness, rng: random.Random) -> None:
    image = h.controller.image
    kind = rng.randrange(8)
    if kind == 0:
        broker = rng.choice(BROKERS)
        incarnation = uuid.UUID(int=broker * 10 + rng.randrange(2))
        h.commit(
            h.controller.register_broker(
                BrokerRegistration(broker, incarnation, (Endpoint("PLAINTEXT", "h", 1),)),
                h.now_ms,
            )
        )
    elif kind in (1, 2) and image.registrations:
        broker = rng.choice(sorted(image.registrations))
        epoch = image.registrations[broker].broker_epoch
        wish = rng.choice([{}, {}, {}, {"want_fence": True}, {"want_shut_down": True}])
        offset = h.image.end_offset - 1 - rng.choice([0, 0, 0, 5])
        h.commit(h.controller.heartbeat(BrokerHeartbeat(broker, epoch, offset, **wish), h.now_ms))
    elif kind == 3:
        h.advance(rng.choice([100, 1000, 5000]))
    elif kind == 4:
        topic = NewTopic(f"t{rng.randrange(5)}", rng.randrange(1, 4), rng.randrange(1, 4))
        h.commit(h.controller.create_topics([topic], h.now_ms))
    elif kind == 5 and image.topics and rng.random() < 0.3:
        h.commit(h.controller.delete_topics([rng.choice(sorted(image.topics))], h.now_ms))
    elif kind == 6:
        states = [s for s in image.partitions() if s.leader != NO_LEADER]
        if not states:
            return
        state = rng.choice(states)
        others = [r for r in state.replicas if r != state.leader]
        new_isr = (state.leader, *rng.sample(others, rng.randrange(len(others) + 1)))
        if rng.random() < 0.2:
            state = rng.choice(states)  # sometimes a stale or foreign request
        epoch = image.registrations[state.leader].broker_epoch
        h.commit(h.controller.alter_partition(state.leader, epoch, [IsrChange.of(state, new_isr)]))
    elif kind == 7 and image.registrations:
        broker = rng.choice(sorted(image.registrations))
        epoch = image.registrations[broker].broker_epoch
        h.commit(h.controller.allocate_producer_ids(broker, epoch))


def check_invariants(h: Harness, epochs: dict[tuple[str, int, bytes], tuple[int, int]]) -> None:
    image = h.image
    assert h.controller.pending_records == 0
    assert h.controller.image == image
    for state in image.partitions():
        key = (state.topic, state.partition, state.topic_id)
        assert state.isr and len(set(state.isr)) == len(state.isr), state
        assert set(state.isr) <= set(state.replicas), state
        acceptable = [r for r in state.isr if _acceptable(image, r)]
        if state.leader != NO_LEADER:
            assert state.leader in state.isr and _acceptable(image, state.leader), state
        else:
            assert not acceptable, state  # someone in the ISR could lead
        if len(acceptable) != len(state.isr):
            assert len(state.isr) == 1 and state.leader == NO_LEADER, state
        before = epochs.get(key, (0, 0))
        assert (state.leader_epoch, state.partition_epoch) >= before, state
        assert state.leader_epoch >= before[0] and state.partition_epoch >= before[1]
        epochs[key] = (state.leader_epoch, state.partition_epoch)


def _acceptable(image: MetadataImage, broker: int) -> bool:
    reg = image.registrations.get(broker)
    return reg is not None and not reg.fenced and not reg.in_controlled_shutdown


@pytest.mark.parametrize("seed", range(30))
def test_random_operations_keep_the_invariants(seed: int) -> None:
    rng = random.Random(seed)
    h = Harness(seed=seed, unclean_leader_election_enable=rng.random() < 0.3)
    start = h.image  # after the activation's records
    log: list[bytes] = []
    h.listener.subscribe(lambda update: log.extend(_payloads(update)))
    epochs: dict[tuple[str, int, bytes], tuple[int, int]] = {}
    for _ in range(300):
        step(h, rng)
        check_invariants(h, epochs)
    replayed = start.apply_all((decode_record(p) for p in log), h.image.end_offset)
    assert replayed == h.image
    assert load_snapshot(encode_snapshot(h.image), h.image.end_offset) == h.image


def _payloads(update: MetadataUpdate) -> list[bytes]:
    return [encode_record(c.record) for c in update.records]
