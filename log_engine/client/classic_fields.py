"""Classic-encoded fields of the group protocols' opaque bytes (consumer and connect).

JoinGroup metadata and SyncGroup assignments carry bytes the broker never
reads; Kafka's consumer and Connect protocols encode them the classic way:
big-endian integers, int16 string lengths, int32 array counts and byte
lengths, -1 for null. :class:`ClassicReader` reads them and raises the
caller's own error class (with the caller's name for the data) on anything
short or malformed; ``write_*`` append them to a ``bytearray``.
"""

from __future__ import annotations

import struct

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")


class ClassicReader:
    """Reads classic-encoded fields from ``data``, raising ``error`` (a ValueError type)."""

    def __init__(self, data: bytes, error: type[ValueError], what: str) -> None:
        self._data = data
        self._pos = 0
        self._error = error
        self._what = what

    def fail(self, problem: str) -> ValueError:
        """The caller's error, naming the data (raise it)."""
        return self._error(f"{problem} in {self._what} data")

    def _take(self, size: int) -> bytes:
        end = self._pos + size
        if size < 0 or end > len(self._data):
            raise self._error(
                f"{self._what} data truncated at byte {self._pos} (needs {size} more)"
            )
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def at_end(self) -> bool:
        return self._pos >= len(self._data)

    def int16(self) -> int:
        return int(INT16.unpack(self._take(2))[0])

    def int32(self) -> int:
        return int(INT32.unpack(self._take(4))[0])

    def int64(self) -> int:
        return int(INT64.unpack(self._take(8))[0])

    def count(self) -> int:
        """An array's length; a null array reads as empty."""
        return max(self.int32(), 0)

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise self.fail("null string")
        try:
            return self._take(length).decode()
        except UnicodeDecodeError as exc:
            raise self.fail(f"a string that is not UTF-8 ({exc})") from exc

    def nullable_bytes(self) -> bytes | None:
        length = self.int32()
        return None if length < 0 else self._take(length)


def write_string(text: str, out: bytearray) -> None:
    encoded = text.encode()
    out += INT16.pack(len(encoded))
    out += encoded


def write_bytes(data: bytes | None, out: bytearray) -> None:
    if data is None:
        out += INT32.pack(-1)
    else:
        out += INT32.pack(len(data))
        out += data


def write_int32_array(numbers: list[int], out: bytearray) -> None:
    out += INT32.pack(len(numbers))
    for number in numbers:
        out += INT32.pack(number)
