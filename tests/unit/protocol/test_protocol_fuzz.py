"""Fuzzing decode_request: random bytes, truncations, mutations and forged lengths.

Whatever arrives, only UnsupportedVersionError, UnknownApiKeyError or
InvalidRequestError may escape (never IndexError, struct.error,
UnicodeDecodeError, MemoryError...).
"""

from __future__ import annotations

import struct
import time
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from protocol_strategies import bodies, supported_versions

from log_engine.protocol import (
    InvalidRequestError,
    UnknownApiKeyError,
    UnsupportedVersionError,
    decode_request,
    encode_request,
    schema_for,
)

REFUSALS = (UnsupportedVersionError, UnknownApiKeyError, InvalidRequestError)
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decode_or_refusal(frame: bytes) -> Exception | None:
    """Decode; return the refusal (one of the three allowed types) or None."""
    try:
        decode_request(frame)
    except REFUSALS as exc:
        return exc
    return None


@st.composite
def valid_frames(draw: Any) -> bytes:
    """A valid request frame (without size prefix) for a supported api and version."""
    api_key, version = draw(st.sampled_from(supported_versions()))
    body = draw(bodies(schema_for(api_key, version, "request")))
    client_id = draw(st.none() | st.text(max_size=6))
    return encode_request(api_key, version, draw(st.integers(0, 2**31 - 1)), client_id, body)[4:]


@st.composite
def supported_headers(draw: Any) -> bytes:
    api_key, version = draw(st.sampled_from(supported_versions()))
    return struct.pack(">hhih", api_key, version, 1, -1)


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_are_refused_or_decoded(frame: bytes) -> None:
    decode_or_refusal(frame)


@FUZZ
@given(supported_headers(), st.binary(max_size=300))
def test_random_bodies_behind_a_valid_header(header: bytes, body: bytes) -> None:
    refusal = decode_or_refusal(header + body)
    if refusal is not None:
        assert isinstance(refusal, InvalidRequestError)
        assert refusal.header is not None


@FUZZ
@given(valid_frames(), st.data())
def test_every_truncation_is_invalid(frame: bytes, data: Any) -> None:
    cut = data.draw(st.integers(0, len(frame) - 1))
    refusal = decode_or_refusal(frame[:cut])
    assert isinstance(refusal, InvalidRequestError)
    assert (refusal.header is None) == (cut < 8)


@FUZZ
@given(valid_frames(), st.data())
def test_single_byte_mutations(frame: bytes, data: Any) -> None:
    index = data.draw(st.integers(0, len(frame) - 1))
    mutated = bytearray(frame)
    mutated[index] = data.draw(st.integers(0, 255).filter(lambda b: b != frame[index]))
    decode_or_refusal(bytes(mutated))


@FUZZ
@given(valid_frames(), st.binary(min_size=1, max_size=8))
def test_trailing_bytes_are_invalid(frame: bytes, extra: bytes) -> None:
    # the one exception: zero bytes after AlterUserScramCredentials (librdkafka sends one)
    assume(not (frame[:2] == b"\x00\x33" and not any(extra)))
    refusal = decode_or_refusal(frame + extra)
    assert isinstance(refusal, InvalidRequestError)
    assert "trailing" in str(refusal)


def test_forged_array_counts_do_not_allocate() -> None:
    """Counts far beyond what the frame could hold are refused before any allocation."""
    produce_v3 = struct.pack(">hhih", 0, 3, 1, -1) + struct.pack(">hhi", -1, 1, 1000)
    metadata_v1 = struct.pack(">hhih", 3, 1, 1, -1)
    frames = [
        produce_v3 + struct.pack(">i", 2**31 - 1),
        metadata_v1 + struct.pack(">i", 2**31 - 1),
        metadata_v1 + struct.pack(">i", 2**31 - 1) + b"\x00" * 64,
        # DescribeGroups v0: an array of strings whose count dwarfs the frame
        struct.pack(">hhih", 15, 0, 1, -1) + struct.pack(">i", 100_000) + b"\x00\x00" * 10,
    ]
    started = time.perf_counter()
    for frame in frames:
        refusal = decode_or_refusal(frame)
        assert isinstance(refusal, InvalidRequestError), frame
        assert "cannot fit" in str(refusal)
    assert time.perf_counter() - started < 0.1
