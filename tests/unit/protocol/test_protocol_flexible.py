"""Flexible versions (KIP-482): golden bytes written out by hand from the specs,
and a real client's (librdkafka's) flexible request read back."""

from __future__ import annotations

import socket
import struct
import threading
import uuid

import confluent_kafka
import pytest

from log_engine.protocol import (
    ApiKey,
    CorruptResponseError,
    ProtocolDecodeError,
    RequestHeader,
    decode_response,
    encode_request,
    encode_response,
    schema_for,
)
from log_engine.protocol.headers import read_request_header
from log_engine.protocol.types import Reader, Writer, uvarint_bytes


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace("|", " "))


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "80 01"),
        (300, "ac 02"),
        (16383, "ff 7f"),
        (16384, "80 80 01"),
        (2**32 - 1, "ff ff ff ff 0f"),
    ],
)
def test_unsigned_varint(value: int, encoded: str) -> None:
    assert uvarint_bytes(value) == h(encoded)
    reader = Reader(h(encoded))
    assert reader.uvarint() == value and reader.remaining == 0


@pytest.mark.parametrize("bad", ["80", "ff ff ff ff ff 01", "ff ff ff ff 1f"])
def test_truncated_overlong_or_overflowing_varint_is_a_decode_error(bad: str) -> None:
    with pytest.raises(ProtocolDecodeError):
        Reader(h(bad)).uvarint()


def test_compact_null_and_empty_are_distinct() -> None:
    writer = Writer(inline=True)
    writer.compact_nullable_string(None)
    writer.compact_nullable_string("")
    writer.compact_string("ab")
    assert bytes(writer.buf) == h("00 | 01 | 03 61 62")
    reader = Reader(writer.buf)
    assert reader.compact_nullable_string() is None
    assert reader.compact_nullable_string() == ""
    assert reader.compact_string() == "ab"
    with pytest.raises(ProtocolDecodeError, match="null string"):
        Reader(h("00")).compact_string()


INIT_PRODUCER_ID_V4_REQUEST = h(
    "00 00 00 1d"  # size: 29 bytes follow
    "| 00 16 | 00 04 | 00 00 00 05"  # InitProducerId v4, correlation id 5
    "| 00 02 61 62"  # client id "ab": int16 length even in request header v2
    "| 00"  # request header v2: no tagged fields
    "| 00"  # transactional_id: compact nullable string, null
    "| 00 00 ea 60"  # transaction_timeout_ms 60000
    "| ff ff ff ff ff ff ff ff | ff ff"  # v3+: producer_id -1, producer_epoch -1
    "| 00"  # body: no tagged fields
)


def test_init_producer_id_v4_request_golden() -> None:
    body = {"transactional_id": None, "transaction_timeout_ms": 60000}
    assert encode_request(22, 4, 5, "ab", body) == INIT_PRODUCER_ID_V4_REQUEST


def test_init_producer_id_v4_response_golden() -> None:
    frame = h(
        "00 00 00 05 | 00"  # response header v1: correlation id 5, no tagged fields
        "| 00 00 00 00 | 00 00"  # throttle 0, error 0
        "| 00 00 00 00 00 00 00 2a | 00 03"  # producer id 42, epoch 3
        "| 00"
    )
    assert decode_response(22, 4, frame) == (
        5,
        {"throttle_time_ms": 0, "error_code": 0, "producer_id": 42, "producer_epoch": 3},
    )
    header = RequestHeader(22, 4, 5, None)
    assert b"".join(map(bytes, encode_response(header, decode_response(22, 4, frame)[1]))) == (
        struct.pack(">i", len(frame)) + frame
    )


def test_api_versions_v3_response_keeps_header_v0_and_skips_unknown_tags() -> None:
    frame = h(
        "00 00 00 09"  # response header v0 even though the body is flexible
        "| 00 00"  # error code 0
        "| 02 | 00 16 00 00 00 05 | 00"  # api_keys: 1 entry (22: 0-5), its tag section empty
        "| 00 00 00 00"  # throttle time
        "| 02"  # two tagged fields:
        "| 00 08 | 02 02 78 00 01 00 02 00"  # tag 0 SupportedFeatures (not declared: skipped)
        "| 01 08 | 00 00 00 00 00 00 00 07"  # tag 1 FinalizedFeaturesEpoch = 7
    )
    correlation_id, body = decode_response(18, 3, frame)
    assert correlation_id == 9
    assert body == {
        "error_code": 0,
        "api_keys": [{"api_key": 22, "min_version": 0, "max_version": 5}],
        "throttle_time_ms": 0,
        "finalized_features_epoch": 7,
    }


def test_produce_v9_request_golden_with_a_two_byte_records_length() -> None:
    records = bytes(range(200))
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}],
    }
    expected = (
        h(
            "00 00 00 e7"  # size: 231 bytes follow
            "| 00 00 | 00 09 | 00 00 00 01 | ff ff | 00"  # Produce v9, id 1, null client, no tags
            "| 00 | ff ff | 00 00 75 30"  # null transactional id, acks -1, timeout 30000
            "| 02 | 02 74"  # 1 topic, "t"
            "| 02 | 00 00 00 00"  # 1 partition, index 0
            "| c9 01"  # records: 200 bytes, compact length 201
        )
        + records
        + h("00 | 00 | 00")  # tag sections: partition, topic, body
    )
    assert encode_request(0, 9, 1, None, body) == expected


def test_fetch_v12_response_with_header_tags_and_tagged_partition_fields() -> None:
    records = b"\x01" * 10
    frame = (
        h(
            "00 00 00 02 | 01 05 01 ff"  # header v1: id 2, one unknown header tag (5) skipped
            "| 00 00 00 00 | 00 00 | 00 00 00 00"  # throttle, error, session id
            "| 02 | 02 74"  # 1 topic "t"
            "| 02 | 00 00 00 00 | 00 00"  # 1 partition, index 0, no error
            "| 00 00 00 00 00 00 00 0a | 00 00 00 00 00 00 00 0a"  # high watermark, LSO
            "| 00 00 00 00 00 00 00 00"  # log start offset
            "| 00"  # aborted transactions: null
            "| ff ff ff ff"  # preferred read replica -1
            "| 0b"  # records: 10 bytes
        )
        + records
        + h(
            # tag 0 DivergingEpoch: 13 bytes (a flexible struct ends with its own tag section)
            "| 01 | 00 0d | 00 00 00 01 00 00 00 00 00 00 00 05 00"
            "| 00 | 00"  # topic and body tag sections
        )
    )
    correlation_id, body = decode_response(1, 12, frame)
    assert correlation_id == 2
    (partition,) = body["responses"][0]["partitions"]
    assert bytes(partition["records"]) == records
    assert partition["aborted_transactions"] is None
    assert (partition["high_watermark"], partition["preferred_read_replica"]) == (10, -1)
    assert partition["diverging_epoch"] == {"epoch": 1, "end_offset": 5}
    assert partition["snapshot_id"] == {}  # absent: the default


def test_tags_out_of_order_are_a_decode_error() -> None:
    with pytest.raises(ProtocolDecodeError, match="ascend"):
        Reader(h("02 | 01 00 | 00 00")).tagged_fields()


def test_librdkafka_api_versions_v3_request_reads_back() -> None:
    """librdkafka sends ApiVersions v3 (flexible) first: our schema reads its bytes."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        frames: list[bytes] = []

        def accept() -> None:
            conn, _ = server.accept()
            with conn:
                size = struct.unpack(">i", conn.recv(4, socket.MSG_WAITALL))[0]
                frames.append(conn.recv(size, socket.MSG_WAITALL))

        thread = threading.Thread(target=accept)
        thread.start()
        client = confluent_kafka.Producer(
            {"bootstrap.servers": f"127.0.0.1:{port}", "client.id": "peer", "log_level": 0}
        )
        thread.join(timeout=30)
        client.flush(0)
        del client
    (frame,) = frames
    reader = Reader(frame)
    header, ok = read_request_header(reader)
    assert ok and (header.api_key, header.client_id) == (ApiKey.API_VERSIONS, "peer")
    assert header.api_version >= 3
    assert reader.tagged_fields() == []
    body = schema_for(18, header.api_version, "request").read(reader)
    assert reader.remaining == 0
    assert body["client_software_name"] == "confluent-kafka-python"
    assert body["client_software_version"]


def test_bytes_after_a_whole_flexible_body_are_ignored_classic_ones_are_not() -> None:
    flexible = h("00 00 00 03 | 00 | 00 00 00 00 | 00 00 | 00") + b"\x00"  # Heartbeat v4 + 1
    assert decode_response(12, 4, flexible) == (3, {"throttle_time_ms": 0, "error_code": 0})
    with pytest.raises(CorruptResponseError, match="trailing"):
        decode_response(12, 3, h("00 00 00 03 | 00 00 00 00 | 00 00 | 00"))


def test_api_versions_refusal_in_an_unknown_layout_reads_as_the_bare_error() -> None:
    # librdkafka's mock cluster refuses ApiVersions v3+ with a body neither v0 nor v3
    frame = h("00 00 00 01 | 00 23 | 01 | 00 12 00 00 00 02 | 00 00 00 00")
    assert decode_response(18, 4, frame) == (1, {"error_code": 35, "api_keys": []})


def test_fetch_v13_request_names_the_topic_by_id() -> None:
    topic_id = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
    body = {
        "max_wait_ms": 500,
        "min_bytes": 1,
        "topics": [
            {
                "topic": "ignored at v13",
                "topic_id": topic_id,
                "partitions": [
                    {"partition": 0, "fetch_offset": 5, "partition_max_bytes": 1 << 20}
                ],
            }
        ],
    }
    expected = h(
        "00 00 00 5b | 00 01 00 0d | 00 00 00 03 | ff ff | 00"  # Fetch v13, header v2
        "| ff ff ff ff | 00 00 01 f4 | 00 00 00 01 | 7f ff ff ff"  # replica, wait, min, max
        "| 00 | 00 00 00 00 | ff ff ff ff"  # isolation, session id, session epoch
        "| 02 | 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10"  # 1 topic, by id only
        "| 02 | 00 00 00 00 | ff ff ff ff"  # 1 partition: index 0, current leader epoch
        "| 00 00 00 00 00 00 00 05 | ff ff ff ff"  # fetch offset 5, last fetched epoch
        "| ff ff ff ff ff ff ff ff | 00 10 00 00 | 00"  # log start offset, max bytes, tags
        "| 00 | 01 | 01 | 00"  # topic tags, no forgotten topics, rack "", body tags
    )
    assert encode_request(1, 13, 3, None, body) == expected
