"""Metadata records: round trips at every version, Kafka's framing, bad bytes."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings

from log_engine.errors import MetadataRecordError
from log_engine.metadata.records import (
    RECORD_TYPES,
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    TopicRecord,
    decode_record,
    encode_record,
)
from tests.unit.metadata.strategies import RECORDS


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_round_trip_at_the_write_version(record: MetadataRecord) -> None:
    assert decode_record(encode_record(record)) == record


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_round_trip_at_every_declared_version(record: MetadataRecord) -> None:
    # older versions lack some fields (they decode to their defaults): the bytes round-trip
    lo, hi = record.MESSAGE.versions
    for version in range(lo, hi + 1):
        data = encode_record(record, version)
        assert data[:3] == bytes((1, record.MESSAGE.api_key, version))
        assert encode_record(decode_record(data), version) == data
    assert decode_record(encode_record(record, hi)) == record


def test_record_types_are_kafkas() -> None:
    assert {t: c.__name__ for t, c in RECORD_TYPES.items()} == {
        0: "RegisterBrokerRecord",
        1: "UnregisterBrokerRecord",
        2: "TopicRecord",
        3: "PartitionRecord",
        4: "ConfigRecord",
        5: "PartitionChangeRecord",
        7: "FenceBrokerRecord",
        8: "UnfenceBrokerRecord",
        9: "RemoveTopicRecord",
        11: "UserScramCredentialRecord",
        12: "FeatureLevelRecord",
        15: "ProducerIdsRecord",
        17: "BrokerRegistrationChangeRecord",
        18: "AccessControlEntryRecord",
        19: "RemoveAccessControlEntryRecord",
        20: "NoOpRecord",
        22: "RemoveUserScramCredentialRecord",
    }


def test_golden_bytes_of_a_topic_record() -> None:
    # frame version 1, type 2, version 0; compact string "foo" (length + 1); the uuid;
    # an empty tagged-field section: Kafka's MetadataRecordSerde layout, worked by hand.
    topic_id = uuid.UUID(int=0x0102030405060708090A0B0C0D0E0F10)
    data = encode_record(TopicRecord("foo", topic_id))
    assert data == bytes([1, 2, 0, 4]) + b"foo" + topic_id.bytes + b"\x00"


def test_golden_bytes_of_a_partition_change_uses_tagged_fields() -> None:
    topic_id = uuid.UUID(int=0)
    data = encode_record(PartitionChangeRecord(topic_id, 3, isr=(1, 2), leader=2))
    body = (3).to_bytes(4, "big") + topic_id.bytes
    # two tagged fields: tag 0 (isr: compact array of 2 int32s), tag 1 (leader)
    tags = bytes([2, 0, 9, 3]) + (1).to_bytes(4, "big") + (2).to_bytes(4, "big")
    tags += bytes([1, 4]) + (2).to_bytes(4, "big")
    assert data == bytes([1, 5, 0]) + body + tags
    # nothing changed: no tagged fields at all
    assert encode_record(PartitionChangeRecord(topic_id, 3)) == bytes([1, 5, 0]) + body + b"\x00"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "malformed"),
        (bytes([0, 7, 0]), "frame version 0"),
        (bytes([1, 99, 0]), "unknown metadata record type 99"),
        (bytes([1, 7, 5]), "version 5 is not known"),
        (bytes([1, 7, 0, 0, 0]), "malformed"),
    ],
)
def test_bad_bytes_are_a_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(MetadataRecordError, match=message):
        decode_record(data)


def test_trailing_bytes_are_refused() -> None:
    data = encode_record(FenceBrokerRecord(1, 2)) + b"\x00"
    with pytest.raises(MetadataRecordError, match="1 bytes after a FenceBrokerRecord"):
        decode_record(data)
