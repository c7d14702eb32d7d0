"""Zigzag varints as used inside records (``VARINT``, ``VARLONG``) and unsigned varints.

Zigzag maps signed integers to unsigned ones so small magnitudes take few bytes
(0 -> 0, -1 -> 1, 1 -> 2, ...); the result is written base-128, least significant
group first, with the high bit set on every byte but the last.
"""

from __future__ import annotations

from log_engine.errors import CorruptMessageError

_MAX_VARINT_BYTES = 5
_MAX_VARLONG_BYTES = 10


def write_unsigned_varint(value: int, out: bytearray) -> None:
    """Append ``value`` (>= 0) as a base-128 unsigned varint."""
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(value: int, out: bytearray) -> None:
    """Append a signed 32-bit integer as a zigzag varint."""
    write_unsigned_varint((value << 1) ^ (value >> 31), out)


def write_varlong(value: int, out: bytearray) -> None:
    """Append a signed 64-bit integer as a zigzag varlong."""
    write_unsigned_varint((value << 1) ^ (value >> 63), out)


def read_unsigned_varint(buf: bytes | memoryview, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Read an unsigned varint at ``pos``; return ``(value, next_pos)``."""
    result = 0
    shift = 0
    end = len(buf)
    for i in range(max_bytes):
        if pos >= end:
            raise CorruptMessageError("varint runs past the end of the buffer")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        del i
    raise CorruptMessageError(f"varint longer than {max_bytes} bytes")


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Read a zigzag varint (int32) at ``pos``; return ``(value, next_pos)``."""
    raw, pos = read_unsigned_varint(buf, pos, _MAX_VARINT_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Read a zigzag varlong (int64) at ``pos``; return ``(value, next_pos)``."""
    raw, pos = read_unsigned_varint(buf, pos, _MAX_VARLONG_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos
