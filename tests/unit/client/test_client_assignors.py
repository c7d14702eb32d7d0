"""Range and round-robin assignors, and ConsumerProtocol bytes."""

from __future__ import annotations

import struct

import pytest

from log_engine.client.assignors import RangeAssignor, RoundRobinAssignor, assignor_for
from log_engine.client.consumer_protocol import (
    Assignment,
    ConsumerProtocolError,
    Subscription,
)
from log_engine.client.types import TopicPartition as TP


def _subs(**topics_by_member: list[str]) -> dict[str, Subscription]:
    return {member: Subscription(tuple(topics)) for member, topics in topics_by_member.items()}


def test_range_gives_the_first_members_the_extra_partitions() -> None:
    plan = RangeAssignor().assign({"t": 5}, _subs(c1=["t"], c0=["t"]))
    assert plan == {
        "c0": [TP("t", 0), TP("t", 1), TP("t", 2)],
        "c1": [TP("t", 3), TP("t", 4)],
    }


def test_range_assigns_each_topic_separately() -> None:
    plan = RangeAssignor().assign({"a": 3, "b": 3}, _subs(m1=["a", "b"], m2=["a", "b"]))
    assert plan == {
        "m1": [TP("a", 0), TP("a", 1), TP("b", 0), TP("b", 1)],
        "m2": [TP("a", 2), TP("b", 2)],
    }


def test_range_skips_members_not_subscribed_and_unknown_topics() -> None:
    plan = RangeAssignor().assign({"a": 2}, _subs(m1=["a"], m2=["b"]))
    assert plan == {"m1": [TP("a", 0), TP("a", 1)], "m2": []}


def test_roundrobin_deals_sorted_partitions_in_turn() -> None:
    plan = RoundRobinAssignor().assign({"a": 3, "b": 2}, _subs(m2=["a", "b"], m1=["a", "b"]))
    assert plan == {
        "m1": [TP("a", 0), TP("a", 2), TP("b", 1)],
        "m2": [TP("a", 1), TP("b", 0)],
    }


def test_roundrobin_skips_members_not_subscribed_to_a_topic() -> None:
    plan = RoundRobinAssignor().assign({"a": 2, "b": 2}, _subs(m1=["a"], m2=["a", "b"]))
    assert plan == {"m1": [TP("a", 0)], "m2": [TP("a", 1), TP("b", 0), TP("b", 1)]}


def test_every_partition_is_assigned_exactly_once() -> None:
    counts = {"x": 7, "y": 4, "z": 1}
    subs = _subs(a=["x", "y", "z"], b=["x", "y", "z"], c=["x", "y", "z"])
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        plan = assignor.assign(counts, subs)
        assigned = [tp for tps in plan.values() for tp in tps]
        assert sorted(assigned) == sorted(TP(t, p) for t, n in counts.items() for p in range(n))


def test_assignor_names_are_kafkas() -> None:
    assert assignor_for("range").name == "range"
    assert assignor_for("roundrobin").name == "roundrobin"
    with pytest.raises(ValueError):
        assignor_for("sticky")


def test_subscription_v0_bytes() -> None:
    encoded = Subscription(("ab", "c")).encode()
    assert encoded == (
        b"\x00\x00" + b"\x00\x00\x00\x02" + b"\x00\x02ab" + b"\x00\x01c" + b"\xff\xff\xff\xff"
    )
    assert Subscription.decode(encoded) == Subscription(("ab", "c"))


def test_subscription_of_a_later_version_reads_its_v0_prefix() -> None:
    # v1 appends owned partitions (topic "t", partition 0) after the user data.
    owned = b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x00"
    v1 = b"\x00\x01" + b"\x00\x00\x00\x01\x00\x01t" + b"\x00\x00\x00\x02ud" + owned
    assert Subscription.decode(v1) == Subscription(("t",), b"ud")


def test_assignment_round_trip_groups_partitions_by_topic() -> None:
    assignment = Assignment((TP("a", 1), TP("b", 0), TP("a", 3)), b"data")
    encoded = assignment.encode()
    (topics,) = struct.unpack_from(">i", encoded, 2)
    assert topics == 2
    assert Assignment.decode(encoded).partitions == (TP("a", 1), TP("a", 3), TP("b", 0))
    assert Assignment.decode(encoded).user_data == b"data"


def test_empty_assignment_bytes_mean_nothing_assigned() -> None:
    assert Assignment.decode(b"") == Assignment()


def test_truncated_assignment_is_an_error() -> None:
    with pytest.raises(ConsumerProtocolError):
        Assignment.decode(Assignment((TP("a", 1),)).encode()[:9])
