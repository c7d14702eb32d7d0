"""Golden bytes: frames written out by hand from the message specs, byte by byte."""

from __future__ import annotations

from log_engine.file_slice import FileSlice
from log_engine.protocol import (
    ApiKey,
    RequestHeader,
    api_version_entries,
    api_versions_fallback_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from log_engine.records import Record, build_batch


def h(text: str) -> bytes:
    """Hex with spaces and ``|`` separators allowed, for readable goldens."""
    return bytes.fromhex(text.replace("|", " "))


def joined(chunks: list) -> bytes:
    return b"".join(c.read() if isinstance(c, FileSlice) else bytes(c) for c in chunks)


# --- request header v1 and ApiVersions ----------------------------------------------

API_VERSIONS_V0_REQUEST = h(
    "00 00 00 0c"  # size: 12 bytes follow
    "| 00 12 | 00 00 | 00 00 00 01"  # api key 18, version 0, correlation id 1
    "| 00 02 61 62"  # client id "ab"
)


def test_api_versions_v0_request_encodes_to_golden() -> None:
    assert encode_request(18, 0, 1, "ab", {}) == API_VERSIONS_V0_REQUEST


def test_api_versions_v0_request_decodes_header() -> None:
    header, body = decode_request(API_VERSIONS_V0_REQUEST[4:])
    assert header == RequestHeader(api_key=18, api_version=0, correlation_id=1, client_id="ab")
    # v0 carries no fields; the v3+ client software fields read as their defaults
    assert body == {"client_software_name": "", "client_software_version": ""}


def test_null_client_id_is_minus_one_length() -> None:
    frame = encode_request(18, 2, 0x01020304, None, {})
    assert frame == h("00 00 00 0a | 00 12 00 02 | 01 02 03 04 | ff ff")
    assert decode_request(frame[4:])[0].client_id is None


def test_api_versions_v2_response_golden() -> None:
    header = RequestHeader(18, 2, 7, "c")
    body = {
        "error_code": 0,
        "api_keys": [{"api_key": 0, "min_version": 3, "max_version": 8}],
        "throttle_time_ms": 0,
    }
    expected = h(
        "00 00 00 14"  # 20 bytes follow
        "| 00 00 00 07"  # response header v0: correlation id
        "| 00 00"  # error code
        "| 00 00 00 01 | 00 00 00 03 00 08"  # api_keys: [{0, 3, 8}]
        "| 00 00 00 00"  # throttle time
    )
    assert joined(encode_response(header, body)) == expected


def test_kip511_fallback_golden() -> None:
    expected = h(
        "00 00 00 10"  # 16 bytes follow
        "| 00 00 00 2a"  # correlation id 42
        "| 00 23"  # error 35 UNSUPPORTED_VERSION
        "| 00 00 00 01 | 00 12 00 00 00 02"  # api_keys: [{18, 0, 2}]
    )
    assert api_versions_fallback_response(42) == expected


def test_client_reads_kip511_fallback_when_asking_v2() -> None:
    frame = api_versions_fallback_response(9)[4:]
    correlation_id, body = decode_response(18, 2, frame)
    assert correlation_id == 9
    assert body["error_code"] == 35
    assert body["api_keys"] == [{"api_key": 18, "min_version": 0, "max_version": 2}]


def test_api_version_entries_come_from_the_table() -> None:
    entries = {e["api_key"]: (e["min_version"], e["max_version"]) for e in api_version_entries()}
    assert entries[ApiKey.PRODUCE] == (3, 8)
    assert entries[ApiKey.FETCH] == (4, 11)
    assert entries[ApiKey.SASL_HANDSHAKE] == (0, 1)
    assert entries[ApiKey.SASL_AUTHENTICATE] == (0, 1)


# --- Metadata ---------------------------------------------------------------------


METADATA_V1_REQUEST = h(
    "00 00 00 14"  # 20 bytes follow
    "| 00 03 00 01 | 00 00 00 07 | 00 01 63"  # Metadata v1, corr 7, client "c"
    "| 00 00 00 01 | 00 03 66 6f 6f"  # topics: [{name: "foo"}]
)


def test_metadata_v1_request_golden() -> None:
    assert encode_request(3, 1, 7, "c", {"topics": [{"name": "foo"}]}) == METADATA_V1_REQUEST
    header, body = decode_request(METADATA_V1_REQUEST[4:])
    assert (header.api_key, header.api_version, header.correlation_id) == (3, 1, 7)
    assert [topic["name"] for topic in body["topics"]] == ["foo"]  # (+ v10's topic_id default)
    # fields of later versions are filled with their spec defaults
    assert body["allow_auto_topic_creation"] is True
    assert body["include_topic_authorized_operations"] is False


def test_metadata_v1_null_topics_means_all() -> None:
    frame = encode_request(3, 1, 7, "c", {"topics": None})
    assert frame[-4:] == h("ff ff ff ff")
    assert decode_request(frame[4:])[1]["topics"] is None


def test_metadata_v1_response_golden() -> None:
    header = RequestHeader(3, 1, 5, None)
    body = {
        "brokers": [{"node_id": 1, "host": "h", "port": 9092, "rack": None}],
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": "t",
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": 0,
                        "leader_id": 1,
                        "replica_nodes": [1],
                        "isr_nodes": [1],
                    }
                ],
            }
        ],
    }
    expected = h(
        "00 00 00 00"  # size, checked below
        "| 00 00 00 05"  # correlation id
        "| 00 00 00 01 | 00 00 00 01 | 00 01 68 | 00 00 23 84 | ff ff"  # broker 1 h:9092 rack null
        "| 00 00 00 01"  # controller id
        "| 00 00 00 01 | 00 00 | 00 01 74 | 00"  # topic: error 0, "t", not internal
        "| 00 00 00 01 | 00 00 | 00 00 00 00 | 00 00 00 01"  # partition 0, leader 1
        "| 00 00 00 01 00 00 00 01 | 00 00 00 01 00 00 00 01"  # replicas [1], isr [1]
    )
    expected = (len(expected) - 4).to_bytes(4, "big") + expected[4:]
    assert joined(encode_response(header, body)) == expected


# --- Produce ----------------------------------------------------------------------


def test_produce_v3_request_golden_and_zero_copy() -> None:
    batch = build_batch([Record(key=b"k", value=b"v", timestamp=1)], now_ms=1)
    body_bytes = (
        h("ff ff")  # transactional id: null
        + h("ff ff")  # acks -1
        + h("00 00 03 e8")  # timeout 1000 ms
        + h("00 00 00 01 | 00 01 74")  # topic_data: [{name: "t", ...
        + h("00 00 00 01 | 00 00 00 00")  # partition_data: [{index: 0, ...
        + len(batch).to_bytes(4, "big")
        + batch
    )
    header = h("00 00 00 03 | 00 00 00 0b | 00 01 70")  # Produce v3, corr 11, client "p"
    frame = (len(header) + len(body_bytes)).to_bytes(4, "big") + header + body_bytes

    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
    }
    assert encode_request(0, 3, 11, "p", body) == frame

    payload = memoryview(frame)[4:]
    _, decoded = decode_request(payload)
    records = decoded["topic_data"][0]["partition_data"][0]["records"]
    assert isinstance(records, memoryview)
    assert records.obj is frame  # a slice of the request frame, not a copy
    assert bytes(records) == batch


def test_produce_v3_null_records() -> None:
    body = {
        "acks": 1,
        "timeout_ms": 5,
        "topic_data": [{"name": "t", "partition_data": [{"index": 2, "records": None}]}],
    }
    frame = encode_request(0, 3, 1, None, body)
    assert frame.endswith(h("00 00 00 02 | ff ff ff ff"))
    assert decode_request(frame[4:])[1]["topic_data"][0]["partition_data"][0]["records"] is None


def test_produce_v8_response_golden() -> None:
    header = RequestHeader(0, 8, 3, "p")
    partition = {"index": 0, "error_code": 0, "base_offset": 42, "log_start_offset": 0}
    body = {"responses": [{"name": "t", "partition_responses": [partition]}]}
    expected = h(
        "00 00 00 00 | 00 00 00 03"  # size (below), correlation id
        "| 00 00 00 01 | 00 01 74"  # responses: [{name: "t",
        "| 00 00 00 01 | 00 00 00 00 | 00 00"  # partition 0, error 0
        "| 00 00 00 00 00 00 00 2a"  # base offset 42
        "| ff ff ff ff ff ff ff ff"  # log append time: default -1
        "| 00 00 00 00 00 00 00 00"  # log start offset 0
        "| 00 00 00 00 | ff ff"  # record_errors: [], error_message: null
        "| 00 00 00 00"  # throttle time: default 0
    )
    expected = (len(expected) - 4).to_bytes(4, "big") + expected[4:]
    assert joined(encode_response(header, body)) == expected


# --- Fetch response chunks ----------------------------------------------------------


def test_fetch_v4_response_attaches_records_as_chunks(tmp_path) -> None:
    data = tmp_path / "seg.log"
    data.write_bytes(b"0123456789")
    with open(data, "rb") as f:
        piece = FileSlice(f.fileno(), 2, 5)
        tail = b"XY"
        header = RequestHeader(1, 4, 99, "c")
        body = {
            "throttle_time_ms": 0,
            "responses": [
                {
                    "topic": "t",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "error_code": 0,
                            "high_watermark": 10,
                            "last_stable_offset": 10,
                            "aborted_transactions": None,
                            "records": [piece, tail],
                        }
                    ],
                }
            ],
        }
        chunks = encode_response(header, body)
        assert chunks[1] is piece and chunks[2] is tail
        expected = (
            h(
                "00 00 00 00 | 00 00 00 63"  # size (below), correlation id 99
                "| 00 00 00 00"  # throttle
                "| 00 00 00 01 | 00 01 74 | 00 00 00 01"  # topic "t", one partition
                "| 00 00 00 00 | 00 00 | 00 00 00 00 00 00 00 0a"  # partition 0, no error, hw 10
                "| 00 00 00 00 00 00 00 0a | ff ff ff ff"  # lso 10, aborted: null
                "| 00 00 00 07"  # records: 7 bytes
            )
            + b"23456XY"
        )
        expected = (len(expected) - 4).to_bytes(4, "big") + expected[4:]
        assert joined(chunks) == expected


# --- OffsetForLeaderEpoch v3 (a follower's truncation question) ---------------------

OFFSET_FOR_LEADER_EPOCH_V3_REQUEST = h(
    "00 00 00 25"  # size: 37 bytes follow
    "| 00 17 | 00 03 | 00 00 00 05 | ff ff"  # api key 23, v3, correlation 5, null client id
    "| 00 00 00 02"  # replica_id 2
    "| 00 00 00 01 | 00 01 74"  # 1 topic: "t"
    "| 00 00 00 01 | 00 00 00 00 | 00 00 00 04 | 00 00 00 03"  # partition 0, current 4, asked 3
)


def test_offset_for_leader_epoch_v3_request_golden() -> None:
    body = {
        "replica_id": 2,
        "topics": [
            {
                "topic": "t",
                "partitions": [{"partition": 0, "current_leader_epoch": 4, "leader_epoch": 3}],
            }
        ],
    }
    assert encode_request(23, 3, 5, None, body) == OFFSET_FOR_LEADER_EPOCH_V3_REQUEST
    assert decode_request(OFFSET_FOR_LEADER_EPOCH_V3_REQUEST[4:])[1] == body


def test_offset_for_leader_epoch_v3_response_golden() -> None:
    header = RequestHeader(23, 3, 5, None)
    body = {
        "throttle_time_ms": 0,
        "topics": [
            {
                "topic": "t",
                "partitions": [
                    {"error_code": 0, "partition": 0, "leader_epoch": 3, "end_offset": 10}
                ],
            }
        ],
    }
    expected = h(
        "00 00 00 00 | 00 00 00 05"  # (size placeholder) correlation id 5
        "| 00 00 00 00"  # throttle_time_ms
        "| 00 00 00 01 | 00 01 74"  # 1 topic: "t"
        "| 00 00 00 01 | 00 00 | 00 00 00 00 | 00 00 00 03 | 00 00 00 00 00 00 00 0a"
    )
    frame = joined(encode_response(header, body))
    assert frame[4:] == expected[4:]
    assert decode_response(23, 3, frame[4:])[1] == body
