"""Golden varint encodings from RECORD-FORMAT.md section 1, and bad input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from log_engine.errors import CorruptMessageError
from log_engine.records.varint import (
    read_unsigned_varint,
    read_varint,
    read_varlong,
    write_unsigned_varint,
    write_varint,
    write_varlong,
)

ZIGZAG_GOLDEN = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
]
UNSIGNED_GOLDEN = [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02")]


@pytest.mark.parametrize(("value", "encoded"), ZIGZAG_GOLDEN)
def test_zigzag_varint_golden(value: int, encoded: str) -> None:
    out = bytearray()
    write_varint(value, out)
    assert out.hex() == encoded
    assert read_varint(bytes.fromhex(encoded), 0) == (value, len(out))
    long_out = bytearray()
    write_varlong(value, long_out)
    assert long_out == out


@pytest.mark.parametrize(("value", "encoded"), UNSIGNED_GOLDEN)
def test_unsigned_varint_golden(value: int, encoded: str) -> None:
    out = bytearray()
    write_unsigned_varint(value, out)
    assert out.hex() == encoded
    assert read_unsigned_varint(bytes.fromhex(encoded), 0) == (value, len(out))


def test_extremes() -> None:
    for value, size in [(2**31 - 1, 5), (-(2**31), 5)]:
        out = bytearray()
        write_varint(value, out)
        assert len(out) == size and read_varint(bytes(out), 0)[0] == value
    for value in (2**63 - 1, -(2**63)):
        out = bytearray()
        write_varlong(value, out)
        assert len(out) == 10 and read_varlong(bytes(out), 0)[0] == value


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(value: int) -> None:
    out = bytearray(b"\xff")
    write_varint(value, out)
    assert read_varint(bytes(out), 1) == (value, len(out))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    out = bytearray()
    write_varlong(value, out)
    assert read_varlong(bytes(out), 0) == (value, len(out))


def test_truncated_and_overlong_varints() -> None:
    with pytest.raises(CorruptMessageError):
        read_varint(b"\x80\x80", 0)
    with pytest.raises(CorruptMessageError):
        read_varint(b"\xff\xff\xff\xff\xff\x01", 0)  # 6 bytes for an int32
    with pytest.raises(CorruptMessageError):
        read_varlong(b"\xff" * 10 + b"\x01", 0)
