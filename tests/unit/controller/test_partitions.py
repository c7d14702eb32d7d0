"""CreatePartitions at the controller: growth only, placement, manual assignments."""

from __future__ import annotations

from log_engine.controller import NewPartitions
from log_engine.errors import ErrorCode
from tests.unit.controller.harness import Harness


def _grow(h: Harness, *requests: NewPartitions, validate_only: bool = False):  # type: ignore[no-untyped-def]
    return h.commit(h.controller.create_partitions(requests, h.now_ms, validate_only))


def test_new_partitions_are_placed_like_a_new_topic_with_the_topic_factor() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("orders", partitions=1, factor=3)
    (outcome,) = _grow(h, NewPartitions("orders", 3))
    assert outcome.error_code == 0 and outcome.num_partitions == 3
    assert sorted(h.image.topics["orders"].partitions) == [0, 1, 2]
    for p in (1, 2):
        state = h.state("orders", p)
        assert sorted(state.replicas) == [1, 2, 3] and state.isr == state.replicas
        assert state.leader == state.replicas[0] and state.leader_epoch == 0


def test_shrinking_or_keeping_the_count_is_refused_with_kafkas_messages() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("orders", partitions=3, factor=2)
    fewer, same, unknown = _grow(
        h, NewPartitions("orders", 2), NewPartitions("orders2", 1), NewPartitions("nope", 4)
    )
    assert fewer.error_code == ErrorCode.INVALID_PARTITIONS
    assert fewer.error_message == (
        "The topic orders currently has 3 partition(s); 2 would not be an increase."
    )
    assert same.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    (equal,) = _grow(h, NewPartitions("orders", 3))
    assert (equal.error_code, equal.error_message) == (
        ErrorCode.INVALID_PARTITIONS,
        "Topic already has 3 partition(s).",
    )
    assert len(h.image.topics["orders"].partitions) == 3


def test_validate_only_and_a_duplicate_topic_write_nothing() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("orders", partitions=1, factor=3)
    (checked,) = _grow(h, NewPartitions("orders", 4), validate_only=True)
    assert checked.error_code == 0
    twice = _grow(h, NewPartitions("orders", 2), NewPartitions("orders", 3))
    assert [o.error_code for o in twice] == [ErrorCode.INVALID_REQUEST] * 2
    assert len(h.image.topics["orders"].partitions) == 1


def test_manual_assignments_are_checked() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("orders", partitions=1, factor=2)
    cases = [
        ((2, 3),),  # one list for two new partitions
        ((2, 3), (3,)),  # wrong factor
        ((2, 3), (3, 3)),  # a broker twice
        ((2, 3), (3, 9)),  # unregistered
    ]
    for assignments in cases:
        (outcome,) = _grow(h, NewPartitions("orders", 3, assignments))
        assert outcome.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT, assignments
        assert outcome.error_message
    (outcome,) = _grow(h, NewPartitions("orders", 3, ((2, 3), (3, 1))))
    assert outcome.error_code == 0
    assert h.state("orders", 1).replicas == (2, 3)
    assert (h.state("orders", 2).replicas, h.state("orders", 2).leader) == ((3, 1), 3)
