"""Golden bytes of the controller APIs (BrokerRegistration 62, BrokerHeartbeat 63,
AlterPartition 56, AllocateProducerIds 67), worked by hand from Kafka's field lists."""

from __future__ import annotations

import struct
import uuid

from log_engine.protocol import decode_response, encode_request, schema_for
from log_engine.protocol.types import Reader, Writer
from log_engine.protocol.versions import ApiKey


def body_bytes(api_key: int, version: int, kind: str, body: dict[str, object]) -> bytes:
    writer = Writer(inline=True)
    schema_for(api_key, version, kind).write(writer, body)  # type: ignore[arg-type]
    return bytes(writer.buf)


def test_broker_heartbeat_v0_request() -> None:
    body = {
        "broker_id": 3,
        "broker_epoch": 42,
        "current_metadata_offset": 1000,
        "want_fence": False,
        "want_shut_down": True,
    }
    expected = struct.pack(">iqq??", 3, 42, 1000, False, True) + b"\x00"
    assert body_bytes(ApiKey.BROKER_HEARTBEAT, 0, "request", body) == expected
    schema = schema_for(ApiKey.BROKER_HEARTBEAT, 1, "request")
    decoded = schema.read(Reader(expected))
    assert decoded == {**body, "offline_log_dirs": []}


def test_broker_heartbeat_response_defaults() -> None:
    data = struct.pack(">ih???", 0, 0, True, False, False) + b"\x00"
    schema = schema_for(ApiKey.BROKER_HEARTBEAT, 0, "response")
    assert schema.read(Reader(data)) == {
        "throttle_time_ms": 0,
        "error_code": 0,
        "is_caught_up": True,
        "is_fenced": False,
        "should_shut_down": False,
    }


def test_broker_registration_v0_request_with_a_uint16_port() -> None:
    incarnation = uuid.UUID(int=9)
    body = {
        "broker_id": 1,
        "cluster_id": "c1",
        "incarnation_id": incarnation,
        "listeners": [
            {"name": "PLAINTEXT", "host": "h", "port": 65000, "security_protocol": 0}
        ],
        "features": [],
        "rack": None,
    }
    listener = b"\x0aPLAINTEXT" + b"\x02h" + struct.pack(">Hh", 65000, 0) + b"\x00"
    expected = (
        struct.pack(">i", 1)
        + b"\x03c1"
        + incarnation.bytes
        + b"\x02"  # one listener (compact: count + 1)
        + listener
        + b"\x01"  # no features
        + b"\x00"  # rack null
        + b"\x00"  # tagged fields
    )
    assert body_bytes(ApiKey.BROKER_REGISTRATION, 0, "request", body) == expected


def test_alter_partition_v2_names_topics_by_id_and_v3_adds_epochs() -> None:
    topic_id = uuid.UUID(int=5)
    partition = {
        "partition_index": 0,
        "leader_epoch": 4,
        "leader_recovery_state": 0,
        "partition_epoch": 7,
    }
    v2 = {
        "broker_id": 1,
        "broker_epoch": 10,
        "topics": [{"topic_id": topic_id, "partitions": [{**partition, "new_isr": [1, 2]}]}],
    }
    isr = b"\x03" + struct.pack(">ii", 1, 2)
    tail = struct.pack(">bi", 0, 7) + b"\x00"
    expected = (
        struct.pack(">iq", 1, 10)
        + b"\x02" + topic_id.bytes
        + b"\x02" + struct.pack(">ii", 0, 4) + isr + tail
        + b"\x00" + b"\x00"
    )
    assert body_bytes(ApiKey.ALTER_PARTITION, 2, "request", v2) == expected
    v3 = {
        **v2,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [
                    {
                        **partition,
                        "new_isr_with_epochs": [
                            {"broker_id": 1, "broker_epoch": 10},
                            {"broker_id": 2, "broker_epoch": 11},
                        ],
                    }
                ],
            }
        ],
    }
    members = b"\x03" + struct.pack(">iq", 1, 10) + b"\x00" + struct.pack(">iq", 2, 11) + b"\x00"
    expected_v3 = expected.replace(isr, members)
    assert body_bytes(ApiKey.ALTER_PARTITION, 3, "request", v3) == expected_v3


def test_alter_partition_v0_names_topics() -> None:
    body = {
        "broker_id": 1,
        "broker_epoch": 10,
        "topics": [
            {
                "topic_name": "t",
                "partitions": [
                    {"partition_index": 0, "leader_epoch": 0, "new_isr": [1], "partition_epoch": 0}
                ],
            }
        ],
    }
    data = body_bytes(ApiKey.ALTER_PARTITION, 0, "request", body)
    assert data[12:15] == b"\x02\x02t"  # one topic, then its compact name


def test_allocate_producer_ids_round_trip_through_the_client_codec() -> None:
    body = {"broker_id": 1, "broker_epoch": 5}
    frame = encode_request(ApiKey.ALLOCATE_PRODUCER_IDS, 0, 7, "broker-1", body)
    assert frame.endswith(struct.pack(">iq", 1, 5) + b"\x00")
    response = (
        struct.pack(">i", 7) + b"\x00"  # correlation id, response header v1 tagged fields
        + struct.pack(">ihqi", 0, 0, 2000, 1000) + b"\x00"
    )
    correlation_id, body = decode_response(ApiKey.ALLOCATE_PRODUCER_IDS, 0, response)
    assert correlation_id == 7
    assert (body["producer_id_start"], body["producer_id_len"]) == (2000, 1000)
