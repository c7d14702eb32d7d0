"""Topic names, filters, templates and payload encoding of the MQTT sink."""

from __future__ import annotations

import pytest

from connectors.api import DataError, SinkRecord
from connectors.mqtt.payload import TopicTemplate, encode_payload
from connectors.mqtt.topics import topic_filter_problem, topic_name_problem


def record(key: object = "k", value: object = b"v", topic: str = "orders") -> SinkRecord:
    return SinkRecord(topic=topic, partition=3, key=key, value=value, kafka_offset=7)


@pytest.mark.parametrize("name", ["a", "a/b/c", "/leading", "sp ace/ü"])
def test_valid_topic_names(name: str) -> None:
    assert topic_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [("", "empty"), ("a/+", "wildcard"), ("a/#", "wildcard"), ("a\x00", "NUL"),
     ("x" * 65536, "longer than 65535 bytes")],
)
def test_invalid_topic_names(name: str, problem: str) -> None:
    assert problem in (topic_name_problem(name) or "")


@pytest.mark.parametrize("good", ["#", "+", "a/+/c", "a/#", "+/+/#", "a/b"])
def test_valid_filters(good: str) -> None:
    assert topic_filter_problem(good) is None


@pytest.mark.parametrize("bad", ["a/#/c", "a#", "a/b+", "", "a\x00"])
def test_invalid_filters(bad: str) -> None:
    assert topic_filter_problem(bad) is not None


def test_template_substitutes_topic_key_and_partition() -> None:
    template = TopicTemplate("out/${topic}/${partition}/${key}")
    assert template.render(record(key="dev1")) == "out/orders/3/dev1"
    assert template.render(record(key=b"dev2")) == "out/orders/3/dev2"
    assert template.render(record(key=42)) == "out/orders/3/42"
    assert TopicTemplate("static/topic").render(record()) == "static/topic"


def test_template_results_that_are_not_topic_names_are_data_errors() -> None:
    template = TopicTemplate("out/${key}")
    with pytest.raises(DataError, match=r"MQTT topic 'out/a/#' .* contains a wildcard"):
        template.render(record(key="a/#"))
    with pytest.raises(DataError, match=r"needs \$\{key\} but the key is null"):
        template.render(record(key=None))


def test_payload_encoding() -> None:
    assert encode_payload(b"\x00\x01") == b"\x00\x01"
    assert encode_payload(bytearray(b"ab")) == b"ab"
    assert encode_payload("é") == "é".encode()
    assert encode_payload(None) == b""
    assert encode_payload({"a": [1, 2.5, None], "b": True}) == b'{"a":[1,2.5,null],"b":true}'
    assert encode_payload(12) == b"12"
    with pytest.raises(DataError, match="cannot publish a set value as JSON"):
        encode_payload({1, 2})
    with pytest.raises(DataError, match="float"):
        encode_payload(float("nan"))
