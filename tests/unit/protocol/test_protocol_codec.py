"""decode_request refusals, encode_response chunking and defaults, encode errors,
decode_response failures: the codec's contract at its edges."""

from __future__ import annotations

import struct
import timeit

import pytest

from log_engine.errors import NetworkExceptionError
from log_engine.file_slice import FileSlice
from log_engine.protocol import (
    ApiKey,
    CorruptResponseError,
    EncodeError,
    InvalidRequestError,
    RequestHeader,
    UnknownApiKeyError,
    UnsupportedVersionError,
    api_versions_fallback_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)


def header_bytes(api_key: int, version: int, correlation_id: int = 1, client: bytes = b"") -> bytes:
    client_part = struct.pack(">h", len(client)) + client if client else struct.pack(">h", -1)
    return struct.pack(">hhi", api_key, version, correlation_id) + client_part


# --- refusals --------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 7])
def test_shorter_than_a_header_is_invalid_without_header(size: int) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        decode_request(b"\x00" * size)
    assert caught.value.header is None
    assert caught.value.errno == 42


def test_unknown_api_key_carries_the_header() -> None:
    with pytest.raises(UnknownApiKeyError) as caught:
        decode_request(header_bytes(99, 0, 77, b"cli"))
    assert caught.value.header == RequestHeader(99, 0, 77, "cli")
    assert isinstance(caught.value, InvalidRequestError)


@pytest.mark.parametrize(
    ("api_key", "version"),
    [
        (ApiKey.PRODUCE, 2),  # message format v0/v1 era: not served
        (ApiKey.PRODUCE, 9),  # flexible
        (ApiKey.FETCH, 3),
        (ApiKey.METADATA, 9),
        (ApiKey.SASL_HANDSHAKE, 2),  # known key, version not served
        (ApiKey.SASL_AUTHENTICATE, 2),  # flexible
        (ApiKey.API_VERSIONS, -1),
    ],
)
def test_unsupported_versions_carry_the_header(api_key: int, version: int) -> None:
    with pytest.raises(UnsupportedVersionError) as caught:
        decode_request(header_bytes(api_key, version, 5) + b"garbage")
    assert caught.value.header == RequestHeader(api_key, version, 5, None)
    assert caught.value.errno == 35


def test_flexible_api_versions_request_gets_the_kip511_fallback() -> None:
    """An ApiVersions v3 request (header v2, compact body) from a modern client."""
    frame = header_bytes(ApiKey.API_VERSIONS, 3, 0x0A0B0C0D, b"rdkafka")
    frame += b"\x00"  # header v2: empty tagged fields
    frame += b"\x08librdkafka\x062.4.0\x00"  # compact strings + tagged fields
    with pytest.raises(UnsupportedVersionError) as caught:
        decode_request(frame)
    header = caught.value.header
    assert header is not None and header.client_id == "rdkafka"
    response = api_versions_fallback_response(header.correlation_id)
    assert response[4:8] == b"\x0a\x0b\x0c\x0d"
    assert response[8:10] == b"\x00\x23"


def test_malformed_client_id_is_invalid_with_header() -> None:
    frame = struct.pack(">hhih", ApiKey.METADATA, 1, 3, 200) + b"short"
    with pytest.raises(InvalidRequestError) as caught:
        decode_request(frame)
    assert caught.value.header == RequestHeader(3, 1, 3, None)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (struct.pack(">i", -1), "invalid array length"),  # Metadata v0 topics are not nullable
        (struct.pack(">i", -2), "invalid array length"),
        (struct.pack(">ih", 1, -1), "invalid string length"),
        (struct.pack(">ih", 1, -2), "invalid string length"),
        (struct.pack(">ih", 1, 2) + b"\xff\xfe", "UTF-8"),
        (struct.pack(">ih", 1, 5) + b"ab", "truncated"),
        (struct.pack(">i", 0) + b"\x00", "trailing"),
    ],
)
def test_malformed_bodies_are_invalid(body: bytes, reason: str) -> None:
    with pytest.raises(InvalidRequestError, match=reason) as caught:
        decode_request(header_bytes(ApiKey.METADATA, 0) + body)
    assert caught.value.header is not None


def test_negative_records_length_other_than_null_is_invalid() -> None:
    body = struct.pack(">hhi", -1, 1, 100) + struct.pack(">ih", 1, 1) + b"t"
    body += struct.pack(">iii", 1, 0, -5)
    with pytest.raises(InvalidRequestError, match="invalid records length"):
        decode_request(header_bytes(ApiKey.PRODUCE, 3) + body)


def test_bool_reads_any_non_zero_as_true() -> None:
    body = struct.pack(">i", -1) + b"\x07"  # Metadata v4: topics null, allow_auto = 7
    _, decoded = decode_request(header_bytes(ApiKey.METADATA, 4) + body)
    assert decoded["allow_auto_topic_creation"] is True


def test_absent_fields_get_spec_defaults_and_fresh_lists() -> None:
    _, first = decode_request(encode_request(1, 4, 1, None, {"topics": []})[4:])
    assert first["replica_id"] == -1  # encoded default
    assert first["session_epoch"] == -1 and first["session_id"] == 0  # v7+ fields
    assert first["rack_id"] == "" and first["forgotten_topics_data"] == []
    first["forgotten_topics_data"].append("mutated")
    _, second = decode_request(encode_request(1, 4, 1, None, {"topics": []})[4:])
    assert second["forgotten_topics_data"] == []


# --- encode_response ---------------------------------------------------------------


def _fetch_body(records: object) -> dict:
    partition = {"partition_index": 0, "high_watermark": 1, "records": records}
    return {"responses": [{"topic": "t", "partitions": [partition]}]}


def test_records_are_attached_not_copied() -> None:
    blob = memoryview(bytearray(b"x" * 1000))
    chunks = encode_response(RequestHeader(1, 11, 1, None), _fetch_body(blob))
    assert len(chunks) == 2 and chunks[1] is blob
    assert isinstance(chunks[0], bytes) and chunks[0].endswith(struct.pack(">i", 1000))
    size = struct.unpack(">i", chunks[0][:4])[0]
    assert size == len(chunks[0]) - 4 + 1000


def test_file_slices_keep_their_place_between_partitions() -> None:
    first, second = FileSlice(5, 0, 100), FileSlice(5, 100, 50)
    body = _fetch_body([first])
    body["responses"][0]["partitions"].append(
        {"partition_index": 1, "high_watermark": 2, "records": [second]}
    )
    chunks = encode_response(RequestHeader(1, 11, 1, None), body)
    assert [type(c).__name__ for c in chunks] == ["bytes", "FileSlice", "bytes", "FileSlice"]
    assert chunks[1] is first and chunks[3] is second
    total = sum(c.size if isinstance(c, FileSlice) else len(c) for c in chunks)
    assert struct.unpack(">i", chunks[0][:4])[0] == total - 4


def test_empty_and_null_records_add_no_chunks() -> None:
    for records in (b"", None, []):
        assert len(encode_response(RequestHeader(1, 11, 1, None), _fetch_body(records))) == 1


def test_missing_fields_take_defaults_and_extra_keys_are_ignored() -> None:
    body = {"brokers": [], "topics": [], "not_a_field": 1, "rack": "ignored"}
    frame = b"".join(encode_response(RequestHeader(3, 1, 9, None), body))
    _, decoded = decode_response(3, 1, frame[4:])
    assert decoded["controller_id"] == -1  # spec default
    assert "not_a_field" not in decoded


def test_bytearray_records_become_memoryview_chunks() -> None:
    data = bytearray(b"abc")
    chunks = encode_response(RequestHeader(1, 4, 1, None), _fetch_body(data))
    assert isinstance(chunks[1], memoryview) and chunks[1].obj is data


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"responses": [{"name": None, "partition_responses": []}]}, "responses.name"),
        (
            {"responses": [{"name": "t", "partition_responses": [{"index": "zero"}]}]},
            "partition_responses",
        ),
        ({"responses": [{"name": "t", "partition_responses": [{"index": 2**40}]}]}, "index"),
        ({"responses": None}, "ProduceResponse.responses"),
        ({"responses": [{"name": "x" * 40000, "partition_responses": []}]}, "name"),
        ({"responses": [None]}, "expected a dict"),
    ],
)
def test_bodies_that_do_not_fit_raise_encode_error(body: dict, where: str) -> None:
    with pytest.raises(EncodeError, match=where) as caught:
        encode_response(RequestHeader(0, 8, 1, None), body)
    assert "version 8" in str(caught.value)


# --- client side -------------------------------------------------------------------


def test_encode_request_inlines_file_slices(tmp_path) -> None:
    path = tmp_path / "blob"
    path.write_bytes(b"0123456789")
    with open(path, "rb") as f:
        piece = FileSlice(f.fileno(), 3, 4)
        body = {"acks": 1, "timeout_ms": 1, "topic_data": [{"name": "t", "partition_data": []}]}
        body["topic_data"][0]["partition_data"].append({"index": 0, "records": [piece, b"!"]})
        frame = encode_request(0, 3, 1, None, body)
    assert frame.endswith(struct.pack(">i", 5) + b"3456!")


@pytest.mark.parametrize("cut", [0, 3, 5, 9])
def test_truncated_responses_are_corrupt(cut: int) -> None:
    frame = b"".join(encode_response(RequestHeader(12, 1, 1, None), {"error_code": 0}))[4:]
    with pytest.raises(CorruptResponseError) as caught:
        decode_response(12, 1, frame[:cut])
    assert isinstance(caught.value, NetworkExceptionError) and caught.value.retriable


def test_response_with_trailing_bytes_is_corrupt() -> None:
    frame = b"".join(encode_response(RequestHeader(12, 1, 1, None), {}))[4:] + b"\x00"
    with pytest.raises(CorruptResponseError, match="trailing"):
        decode_response(12, 1, frame)


def test_api_versions_response_that_fits_neither_version_is_corrupt() -> None:
    with pytest.raises(CorruptResponseError):
        decode_response(18, 2, b"\x00\x00\x00\x01\x00")


def test_fetch_response_records_are_views_of_the_frame() -> None:
    frame = b"".join(encode_response(RequestHeader(1, 11, 1, None), _fetch_body(b"abcdef")))[4:]
    _, body = decode_response(1, 11, frame)
    records = body["responses"][0]["partitions"][0]["records"]
    assert isinstance(records, memoryview) and records.obj is frame and records == b"abcdef"


def test_hot_paths_do_not_scale_with_the_records_size() -> None:
    """Produce decode and Fetch encode with a 64 MiB blob: microseconds (a copy is ~10 ms)."""
    blob = bytes(64 << 20)
    partition = {"index": 0, "records": blob}
    body = {
        "acks": -1,
        "timeout_ms": 1,
        "topic_data": [{"name": "t", "partition_data": [partition]}],
    }
    frame = memoryview(encode_request(0, 8, 1, "c", body))[4:]
    decode_s = min(timeit.repeat(lambda: decode_request(frame), number=20, repeat=5)) / 20
    header = RequestHeader(1, 11, 1, "c")
    fetch = _fetch_body([blob])
    encode_s = min(timeit.repeat(lambda: encode_response(header, fetch), number=20, repeat=5)) / 20
    assert decode_s < 0.001 and encode_s < 0.001, (decode_s, encode_s)
