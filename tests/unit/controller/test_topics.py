"""Topic creation and deletion, replica placement, producer-id blocks."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from log_engine.controller import NewTopic
from log_engine.controller.placement import PlacementError, place_replicas
from log_engine.errors import ErrorCode
from tests.unit.controller.harness import Harness


@pytest.mark.parametrize("seed", range(20))
def test_placement_spreads_leaders_and_never_repeats_a_broker(seed: int) -> None:
    brokers = [1, 2, 3, 4]
    placed = place_replicas(brokers, 8, 3, random.Random(seed))
    assert all(len(set(replicas)) == 3 for replicas in placed)
    assert Counter(r[0] for r in placed) == {b: 2 for b in brokers}
    assert Counter(b for r in placed for b in r) == {b: 6 for b in brokers}


def test_placement_refuses_a_factor_above_the_brokers() -> None:
    with pytest.raises(PlacementError, match="replication factor 3 is larger than the 2"):
        place_replicas([1, 2], 1, 3, random.Random(0))


def test_create_topic_writes_topic_configs_and_partitions() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    outcome = h.create("orders", partitions=3, factor=2, configs={"retention.ms": "60000"})
    assert outcome.error_code == 0 and outcome.topic_id is not None
    assert (outcome.num_partitions, outcome.replication_factor) == (3, 2)
    topic = h.image.topics["orders"]
    assert topic.topic_id == outcome.topic_id
    assert h.image.topic_configs("orders") == {"retention.ms": "60000"}
    for p in range(3):
        state = h.state("orders", p)
        assert len(state.replicas) == 2 and state.isr == state.replicas
        assert state.leader == state.replicas[0]
        assert (state.leader_epoch, state.partition_epoch) == (0, 0)
    assert len({h.state("orders", p).leader for p in range(3)}) == 3


def test_replication_factor_above_the_unfenced_brokers_is_refused_clearly() -> None:
    h = Harness()
    h.start_brokers(1, 2)
    h.register(3)  # registered but still fenced: it does not count
    outcome = h.create("orders", factor=3)
    assert outcome.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert "replication factor 3 is larger than the 2 unfenced broker(s) [1, 2]" in (
        outcome.error_message or ""
    )
    assert "orders" not in h.image.topics


@pytest.mark.parametrize(
    ("topic", "code", "message"),
    [
        (NewTopic("bad name", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, "invalid topic name"),
        (NewTopic("..", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION, "invalid topic name"),
        (NewTopic("t", 0, 1), ErrorCode.INVALID_PARTITIONS, "must be positive"),
        (NewTopic("t", 1, 0), ErrorCode.INVALID_REPLICATION_FACTOR, "must be positive"),
        (
            NewTopic("t", 1, 1, configs={"min.insync.replicas": "0"}),
            ErrorCode.INVALID_CONFIG,
            "positive integer",
        ),
        (NewTopic("t", assignments={0: (1, 1)}), ErrorCode.INVALID_REPLICA_ASSIGNMENT, "repeat"),
        (NewTopic("t", assignments={0: (1, 9)}), ErrorCode.INVALID_REPLICA_ASSIGNMENT, "[9]"),
        (NewTopic("t", assignments={1: (1,)}), ErrorCode.INVALID_REPLICA_ASSIGNMENT, "numbered"),
        (NewTopic("t", 2, assignments={0: (1,)}), ErrorCode.INVALID_REQUEST, "not both"),
    ],
)
def test_bad_topics_are_refused(topic: NewTopic, code: ErrorCode, message: str) -> None:
    h = Harness()
    h.start_brokers(1, 2)
    (outcome,) = h.commit(h.controller.create_topics([topic], 0))
    assert outcome.error_code == code
    assert message in (outcome.error_message or "")
    assert h.image.topics == {}


def test_manual_assignment_is_kept() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    outcome = h.create("t", -1, -1, assignments={0: (3, 1), 1: (2, 3)})
    assert outcome.error_code == 0
    assert h.state("t", 0).replicas == (3, 1) and h.state("t", 1).leader == 2


def test_a_pending_topic_is_seen_by_the_next_request() -> None:
    h = Harness()
    h.start_brokers(1)
    first = h.controller.create_topics([NewTopic("t", 1, 1)], 0)
    second = h.controller.create_topics([NewTopic("t", 1, 1)], 0)
    assert second.response[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert second.records == ()
    h.commit(first)
    assert "t" in h.image.topics


def test_validate_only_writes_nothing() -> None:
    h = Harness()
    h.start_brokers(1)
    result = h.controller.create_topics([NewTopic("t", 1, 1)], 0, validate_only=True)
    assert result.records == () and result.response[0].error_code == 0


def test_delete_topic() -> None:
    h = Harness()
    h.start_brokers(1)
    h.create("t", factor=1, configs={"retention.ms": "1"})
    deleted, missing = h.commit(h.controller.delete_topics(["t", "missing"], 0))
    assert deleted.error_code == 0
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert h.image.topics == {} and h.image.configs == {}
    assert h.create("t", factor=1).error_code == 0  # the name can be used again


def test_producer_id_blocks_do_not_overlap() -> None:
    h = Harness()
    epoch_1 = h.register(1)
    epoch_2 = h.register(2)
    first = h.commit(h.controller.allocate_producer_ids(1, epoch_1))
    second = h.commit(h.controller.allocate_producer_ids(2, epoch_2))
    assert (first.error_code, first.start, first.length) == (0, 0, 1000)
    assert (second.start, second.length) == (1000, 1000)
    assert h.image.next_producer_id == 2000
    stale = h.commit(h.controller.allocate_producer_ids(1, epoch_1 - 1))
    assert stale.error_code == ErrorCode.STALE_BROKER_EPOCH
