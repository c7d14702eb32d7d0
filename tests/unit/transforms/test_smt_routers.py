"""RegexRouter and TimestampRouter."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError, DataError
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.regex_router import RegexRouter
from transforms.timestamp_router import TimestampRouter

STRIP_PREFIX = """
transforms=route
transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
transforms.route.regex=dbserver1\\.inventory\\.(.*)
transforms.route.replacement=$1
"""


def test_matching_topics_are_renamed_others_pass() -> None:
    check(
        STRIP_PREFIX,
        [
            rec(1, topic="dbserver1.inventory.orders"),
            rec(2, topic="other"),
            rec(3, topic="x.orders"),
        ],
        [rec(1, topic="orders"), rec(2, topic="other"), rec(3, topic="x.orders")],
    )


def test_the_whole_topic_must_match() -> None:
    check(
        "regex=orders\nreplacement=o",
        [rec(1, topic="orders-eu")],
        [rec(1, topic="orders-eu")],
        RegexRouter,
    )


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("(?<env>[a-z]+)-(\\d+)", "${env}_$2", "prod-12", "prod_12"),
        ("(a)(b)", "$2$1$1", "ab", "baa"),
        ("(a)", "$10", "a", "a0"),  # only group 1 exists: $1 then a literal 0
        ("(.*)", "\\$$1", "t", "$t"),
        ("(x)?y", "[$1]", "y", "[]"),
    ],
)
def test_java_replacement_syntax(regex: str, replacement: str, topic: str, expected: str) -> None:
    options = {"regex": regex, "replacement": replacement}
    first, cached = run(options, [rec(1, topic=topic), rec(1, topic=topic)], cls=RegexRouter)
    assert first.topic == cached.topic == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("regex=(a\nreplacement=x", "regex: not a valid regular expression"),
        ("regex=a", "replacement: is required"),
        ("regex=(a)\nreplacement=$2", "refers to group \\$2; the regex has 1"),
        ("regex=(a)\nreplacement=${nope}", "unknown group"),
        ("regex=(a)\nreplacement=$x", "not followed by a group number"),
    ],
)
def test_regex_router_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=RegexRouter)


def test_timestamp_router_defaults() -> None:
    check(
        "transforms=daily\ntransforms.daily.type=TimestampRouter",
        [rec(1, topic="orders", timestamp=1_709_600_000_000)],  # 2024-03-05T01:53:20Z
        [rec(1, topic="orders-20240305", timestamp=1_709_600_000_000)],
    )


def test_timestamp_router_formats() -> None:
    check(
        "topic.format=${timestamp}/${topic}/${topic}\ntimestamp.format=yyyy-MM'm'",
        [rec(1, topic="o", timestamp=0)],
        [rec(1, topic="1970-01m/o/o", timestamp=0)],
        cls=TimestampRouter,
    )


def test_timestamp_router_needs_a_timestamp() -> None:
    with pytest.raises(DataError, match="no timestamp"):
        run("", [rec(1)], cls=TimestampRouter)


def test_timestamp_router_bad_pattern() -> None:
    with pytest.raises(ConfigError, match=r"timestamp.format: pattern letter 'Y' is not supported"):
        run("timestamp.format=YYYY", [], cls=TimestampRouter)
