"""Predicates (TopicNameMatches, HasHeaderKey, RecordIsTombstone) and Filter with them."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError
from tests.unit.transforms.smt_harness import check, configured, rec
from transforms.filter import Filter
from transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches

RECORDS = [
    rec(1, topic="orders"),
    rec(2, topic="orders-dlq", headers=(("debug", "1"),)),
    rec(None, topic="orders"),
]


def test_filter_alone_drops_everything() -> None:
    check("transforms=f\ntransforms.f.type=org.apache.kafka.connect.transforms.Filter", RECORDS, [])
    assert Filter().apply(rec(1)) is None


def test_filter_tombstones() -> None:
    check(
        """
        transforms=dropTombstones
        transforms.dropTombstones.type=Filter
        transforms.dropTombstones.predicate=isTombstone
        predicates=isTombstone
        predicates.isTombstone.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
        """,
        RECORDS,
        RECORDS[:2],
    )


def test_filter_keeps_only_matching_topics_with_negate() -> None:
    check(
        """
        transforms=onlyOrders
        transforms.onlyOrders.type=Filter
        transforms.onlyOrders.predicate=isOrders
        transforms.onlyOrders.negate=true
        predicates=isOrders
        predicates.isOrders.type=TopicNameMatches
        predicates.isOrders.pattern=orders
        """,
        RECORDS,
        [RECORDS[0], RECORDS[2]],
    )


def test_predicate_guards_another_transform() -> None:
    check(
        """
        transforms=mark
        transforms.mark.type=InsertHeader
        transforms.mark.header=seen
        transforms.mark.value.literal=yes
        transforms.mark.predicate=hasDebug
        predicates=hasDebug
        predicates.hasDebug.type=HasHeaderKey
        predicates.hasDebug.name=debug
        """,
        RECORDS,
        [
            RECORDS[0],
            rec(2, topic="orders-dlq", headers=(("debug", "1"), ("seen", "yes"))),
            RECORDS[2],
        ],
    )


def test_predicates_directly() -> None:
    matches = configured(TopicNameMatches, "pattern=orders.*")
    assert [matches.test(r) for r in RECORDS] == [True, True, True]
    assert not matches.test(rec(1, topic="x-orders"))  # the whole topic must match
    has = configured(HasHeaderKey, {"name": "debug"})
    assert [has.test(r) for r in RECORDS] == [False, True, False]
    tombstone = configured(RecordIsTombstone, {})
    assert [tombstone.test(r) for r in RECORDS] == [False, False, True]


@pytest.mark.parametrize(
    ("cls", "options", "message"),
    [
        (TopicNameMatches, "", "pattern: is required"),
        (TopicNameMatches, "pattern=[a-", "pattern: not a valid regular expression"),
        (HasHeaderKey, "name=", "name: String should have at least 1 character"),
    ],
)
def test_bad_options(cls: type, options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        configured(cls, options)
