"""AlterPartition (API 56): each of Kafka's rules, success, and min.insync.replicas."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from log_engine.controller import IsrChange
from log_engine.errors import ErrorCode
from tests.unit.controller.harness import Harness


def cluster(**config: object) -> tuple[Harness, IsrChange, int]:
    """Brokers 1-3 unfenced, topic t (RF 3); a valid shrink of the ISR by the last replica."""
    h = Harness(**config)  # type: ignore[arg-type]
    h.start_brokers(1, 2, 3)
    assert h.create("t", -1, -1, assignments={0: (1, 2, 3)}).error_code == 0
    state = h.state("t")
    return h, IsrChange.of(state, (1, 2)), h.image.registrations[1].broker_epoch


def alter(h: Harness, change: IsrChange, broker: int = 1, epoch: int | None = None, v: int = 3):  # type: ignore[no-untyped-def]
    if epoch is None:
        epoch = h.image.registrations[broker].broker_epoch
    reply = h.commit(h.controller.alter_partition(broker, epoch, [change], v))
    return reply


def test_shrink_and_expand() -> None:
    h, change, _ = cluster()
    reply = alter(h, change)
    (outcome,) = reply.partitions
    assert (reply.error_code, outcome.error_code) == (0, 0)
    assert outcome.state == h.state("t")
    assert outcome.state.isr == (1, 2)
    assert (outcome.state.leader_epoch, outcome.state.partition_epoch) == (0, 1)
    assert not outcome.under_min_isr
    (outcome,) = alter(h, IsrChange.of(outcome.state, (1, 2, 3))).partitions
    assert outcome.error_code == 0 and h.state("t").isr == (1, 2, 3)


def test_unchanged_isr_writes_nothing() -> None:
    h, change, epoch = cluster()
    result = h.controller.alter_partition(1, epoch, [replace(change, new_isr=(1, 2, 3))])
    assert result.records == () and result.response.partitions[0].error_code == 0


def test_isr_below_min_insync_is_allowed_but_reported() -> None:
    h, change, _ = cluster(min_insync_replicas=2)
    (outcome,) = alter(h, replace(change, new_isr=(1,))).partitions
    assert outcome.error_code == 0 and outcome.under_min_isr
    assert h.state("t").isr == (1,)


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        ({"leader_epoch": -1}, ErrorCode.FENCED_LEADER_EPOCH),
        ({"leader_epoch": 1}, ErrorCode.NOT_CONTROLLER),
        ({"partition_epoch": -1}, ErrorCode.INVALID_UPDATE_VERSION),
        ({"partition_epoch": 1}, ErrorCode.NOT_CONTROLLER),
        ({"new_isr": (2, 3)}, ErrorCode.INVALID_REQUEST),  # without the leader
        ({"new_isr": (1, 1)}, ErrorCode.INVALID_REQUEST),
        ({"new_isr": (1, 4)}, ErrorCode.INVALID_REQUEST),  # 4 is not a replica
        ({"new_isr": ()}, ErrorCode.INVALID_REQUEST),
        ({"partition": 5}, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ({"topic_id": uuid.UUID(int=5)}, ErrorCode.UNKNOWN_TOPIC_ID),
        ({"broker_epochs": {2: 1}}, ErrorCode.INELIGIBLE_REPLICA),  # 2 has another epoch
    ],
)
def test_each_rule(edit: dict[str, object], code: ErrorCode) -> None:
    h, change, _ = cluster()
    before = h.state("t")
    (outcome,) = alter(h, replace(change, **edit)).partitions  # type: ignore[arg-type]
    assert outcome.error_code == code
    assert outcome.state is None and h.state("t") == before


def test_only_the_leader_may_alter() -> None:
    h, change, _ = cluster()
    (outcome,) = alter(h, change, broker=2).partitions
    assert outcome.error_code == ErrorCode.INVALID_REQUEST


def test_stale_broker_epoch_refuses_the_whole_request() -> None:
    h, change, epoch = cluster()
    reply = alter(h, change, epoch=epoch - 1)
    assert reply.error_code == ErrorCode.STALE_BROKER_EPOCH and reply.partitions == ()


def test_a_fenced_member_is_ineligible() -> None:
    h, change, _ = cluster()
    shrunk = alter(h, change).partitions[0].state
    h.heartbeat(3, want_fence=True)
    (outcome,) = alter(h, IsrChange.of(shrunk, (1, 2, 3))).partitions
    assert outcome.error_code == ErrorCode.INELIGIBLE_REPLICA
    (outcome,) = alter(h, IsrChange.of(shrunk, (1, 2, 3)), v=1).partitions
    assert outcome.error_code == ErrorCode.OPERATION_NOT_ATTEMPTED


def test_after_a_leader_change_the_old_leader_is_fenced_by_epoch() -> None:
    h, change, _ = cluster()
    h.heartbeat(1, want_fence=True)  # broker 1 leaves: 2 leads in a new epoch
    assert h.state("t").leader == 2
    h.heartbeat(1)
    (outcome,) = alter(h, change).partitions
    assert outcome.error_code == ErrorCode.FENCED_LEADER_EPOCH


def test_alter_isr_in_the_replica_managers_shape() -> None:
    h, _, epoch = cluster()
    state = h.state("t")
    new_state = h.commit(h.controller.alter_isr(1, epoch, state, (1, 3)))
    assert new_state == h.state("t") and new_state.isr == (1, 3)  # type: ignore[union-attr]
    stale = h.commit(h.controller.alter_isr(1, epoch, state, (1,)))  # the old partition epoch
    assert stale == ErrorCode.INVALID_UPDATE_VERSION
    assert h.commit(h.controller.alter_isr(1, epoch - 1, state, (1,))) == 77
