"""Interop with a real client's codec: kafka-python's protocol classes (the ones its
producer and consumer send with) against ours, byte for byte, both directions.

kafka-python 3 builds its messages from the same upstream specs independently
of us; for every supported (api, version) a random body must encode to the same
bytes in both codecs, decode_request must read what kafka-python sends, and
kafka-python must read what encode_response writes.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import kafka.protocol as kafka_protocol  # a dev dependency: never skipped
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.api_message import ApiMessage
from protocol_strategies import bodies, case_id, plain, supported_versions

from log_engine.protocol import (
    ApiKey,
    RequestHeader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    schema_for,
)
from log_engine.protocol.apis.produce import PRODUCE_REQUEST
from log_engine.records import Record, build_batch, decode_batch

pytestmark = pytest.mark.compat

# kafka-python renames these fields (and gives them its own "bitfield" type).
RENAMED = {(ApiKey.METADATA, 8, "response"), (ApiKey.DESCRIBE_GROUPS, 3, "response")}
RENAMED |= {(ApiKey.DESCRIBE_GROUPS, 4, "response")}
INTEROP = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _kafka_python_classes() -> dict[tuple[int, str], type]:
    found: dict[tuple[int, str], type] = {}
    for module in pkgutil.walk_packages(kafka_protocol.__path__, "kafka.protocol."):
        if ".old" in module.name or ".schemas" in module.name:
            continue
        for obj in vars(importlib.import_module(module.name)).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, ApiMessage)
                and getattr(obj, "_json", None) is not None
            ):
                found[(obj.API_KEY, obj.type)] = obj
    return found


KP = _kafka_python_classes()


def to_kp(cls: Any, version: int, value: dict[str, Any]) -> Any:
    """Our body dict as a kafka-python message/struct object."""
    kwargs = {}
    for spec in cls._struct.untagged_fields(version):
        item = value[spec.name]
        if spec.is_struct_array() and item is not None:
            item = [to_kp(spec.data_class, version, element) for element in item]
        kwargs[spec.name] = item
    return cls(version=version, **kwargs)


def from_kp(obj: Any, version: int) -> Any:
    """A decoded kafka-python object as a dict of the version's fields."""
    if isinstance(obj, list):
        return [from_kp(item, version) for item in obj]
    if hasattr(obj, "_struct"):
        return {
            spec.name: from_kp(getattr(obj, spec.name), version)
            for spec in obj._struct.untagged_fields(version)
        }
    return bytes(obj) if isinstance(obj, bytes | bytearray | memoryview) else obj


def present(schema: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` without the absent-field defaults (kafka-python leaves those out)."""
    out = {}
    for name, codec, _ in schema.fields:
        value = body[name]
        item = getattr(codec, "item", None)
        if hasattr(item, "fields") and value is not None:
            value = [present(item, element) for element in value]
        out[name] = value
    return out


def cases(kind: str) -> list[tuple[int, int]]:
    return [c for c in supported_versions() if (c[0], c[1], kind) not in RENAMED]


@pytest.mark.parametrize("case", cases("request"), ids=case_id)
@INTEROP
@given(data=st.data())
def test_requests_match_kafka_python(case: tuple[int, int], data: Any) -> None:
    api_key, version = case
    body = data.draw(bodies(schema_for(api_key, version, "request")))
    message = to_kp(KP[(api_key, "request")], version, body)
    message.with_header(correlation_id=17, client_id="kafka-python")
    theirs = bytes(message.encode(header=True, framed=True))

    assert encode_request(api_key, version, 17, "kafka-python", body) == theirs
    header, decoded = decode_request(theirs[4:])
    assert header == RequestHeader(api_key, version, 17, "kafka-python")
    assert plain(decoded) == body


@pytest.mark.parametrize("case", cases("response"), ids=case_id)
@INTEROP
@given(data=st.data())
def test_responses_match_kafka_python(case: tuple[int, int], data: Any) -> None:
    api_key, version = case
    schema = schema_for(api_key, version, "response")
    body = data.draw(bodies(schema))
    if api_key == ApiKey.API_VERSIONS:
        body["error_code"] = 0  # kafka-python re-reads any error reply as v0 (KIP-511)
    ours = b"".join(encode_response(RequestHeader(api_key, version, 23, "c"), body))

    cls = KP[(api_key, "response")]
    decoded = cls.decode(ours[4:], version=version, header=True)
    assert decoded.header.correlation_id == 23
    assert from_kp(decoded, version) == present(schema, body)

    message = to_kp(cls, version, body)
    message.with_header(correlation_id=23)
    assert bytes(message.encode(header=True, framed=True)) == ours
    assert plain(decode_response(api_key, version, ours[4:])[1]) == body


def test_kafka_python_produce_request_with_a_real_batch() -> None:
    """What kafka-python's producer sends for one batch: decoded with the batch intact."""
    batch = build_batch([Record(key=b"k", value=b"hello", timestamp=5)], now_ms=5)
    cls = KP[(ApiKey.PRODUCE, "request")]
    partition = cls.TopicProduceData.PartitionProduceData(index=3, records=batch)
    topic = cls.TopicProduceData(name="events", partition_data=[partition])
    message = cls[7](transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[topic])
    message.with_header(correlation_id=4, client_id="kafka-python-producer")
    frame = bytes(message.encode(header=True, framed=True))

    header, body = decode_request(frame[4:])
    assert (header.api_key, header.api_version, header.client_id) == (0, 7, "kafka-python-producer")
    records = body["topic_data"][0]["partition_data"][0]["records"]
    _, decoded_records = decode_batch(records)
    assert [r.value for r in decoded_records] == [b"hello"]
    assert PRODUCE_REQUEST.schema(7).fields[0][0] == "transactional_id"


def test_kafka_python_metadata_v0_empty_topics() -> None:
    cls = KP[(ApiKey.METADATA, "request")]
    message = cls[0](topics=None)  # kafka-python sends v0 "all topics" as an empty array
    message.with_header(correlation_id=1, client_id=None)
    frame = bytes(message.encode(header=True, framed=True))
    header, body = decode_request(frame[4:])
    assert header.client_id is None
    assert body["topics"] == []
