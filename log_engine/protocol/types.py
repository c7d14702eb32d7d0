"""The primitive types of Kafka's classic (non-flexible) encoding.

All integers are big-endian. Strings carry an ``int16`` length, bytes, records
and arrays an ``int32`` length; ``-1`` marks null where the field is nullable.
No compact (varint) encodings and no tagged fields: Sluice advertises only
non-flexible versions.

:class:`Reader` reads from a ``memoryview`` with a position and checks every
length against the bytes that remain, raising :class:`ProtocolDecodeError`
(never ``IndexError`` / ``struct.error`` / ``UnicodeDecodeError``). An array
count is refused when the remaining bytes could not hold that many of its
smallest element, so a forged count cannot make the decoder allocate more than
the frame's size. Records fields decode to a zero-copy slice of the frame.

:class:`Writer` appends to a ``bytearray``; records payloads are *attached* as
separate chunks (bytes, memoryview or :class:`FileSlice`) instead of copied, so
a fetch response can go to ``sendfile``. With ``inline=True`` (requests from our
client) payloads are copied into the buffer instead.

:class:`FieldType` pairs a reader with a writer; the schema DSL builds message
codecs out of the instances below plus :class:`ArrayOf`.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from log_engine.file_slice import FileSlice
from log_engine.invariants import InvariantViolation
from log_engine.protocol.errors import ProtocolDecodeError

Chunk = bytes | memoryview | FileSlice
"""A piece of an encoded frame: bytes-like, or a file range to ``sendfile``."""

RecordsValue = bytes | bytearray | memoryview | Sequence[bytes | memoryview | FileSlice] | None
"""What a records field accepts when encoding (None = null)."""

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
_BOOL = struct.Struct(">?")
_F64 = struct.Struct(">d")
_NULL16 = _I16.pack(-1)
_NULL32 = _I32.pack(-1)
INT16_MAX = 0x7FFF
INT32_MAX = 0x7FFFFFFF


class Reader:
    """A bounds-checked cursor over one frame (a ``memoryview`` of bytes)."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0) -> None:
        buf = data if isinstance(data, memoryview) else memoryview(data)
        if buf.format != "B" or buf.ndim != 1:
            buf = buf.cast("B")
        self.buf = buf
        self.pos = pos
        self.end = len(buf)

    @property
    def remaining(self) -> int:
        """Bytes left after the cursor."""
        return self.end - self.pos

    def skip(self, n: int) -> int:
        """Advance over ``n`` bytes and return where they start."""
        pos = self.pos
        if n < 0 or pos + n > self.end:
            raise ProtocolDecodeError(
                f"truncated: {n} bytes needed at offset {pos}, {self.end - pos} left"
            )
        self.pos = pos + n
        return pos

    def unpack(self, fmt: struct.Struct) -> tuple[Any, ...]:
        """Read ``fmt.size`` bytes with a precompiled ``struct.Struct``."""
        return fmt.unpack_from(self.buf, self.skip(fmt.size))

    def int8(self) -> int:
        return int(_I8.unpack_from(self.buf, self.skip(1))[0])

    def int16(self) -> int:
        return int(_I16.unpack_from(self.buf, self.skip(2))[0])

    def int32(self) -> int:
        return int(_I32.unpack_from(self.buf, self.skip(4))[0])

    def int64(self) -> int:
        return int(_I64.unpack_from(self.buf, self.skip(8))[0])

    def uint32(self) -> int:
        return int(_U32.unpack_from(self.buf, self.skip(4))[0])

    def boolean(self) -> bool:
        return bool(self.buf[self.skip(1)])

    def float64(self) -> float:
        return float(_F64.unpack_from(self.buf, self.skip(8))[0])

    def uuid(self) -> uuid.UUID:
        pos = self.skip(16)
        return uuid.UUID(bytes=bytes(self.buf[pos : pos + 16]))

    def _length(self, n: int, nullable: bool, what: str) -> int:
        if n < 0 and not (n == -1 and nullable):
            raise ProtocolDecodeError(f"invalid {what} length {n} at offset {self.pos}")
        return n

    def _utf8(self, n: int) -> str:
        pos = self.skip(n)
        try:
            return str(self.buf[pos : pos + n], "utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolDecodeError(f"invalid UTF-8 in string at offset {pos}") from exc

    def string(self) -> str:
        return self._utf8(self._length(self.int16(), False, "string"))

    def nullable_string(self) -> str | None:
        n = self._length(self.int16(), True, "string")
        return None if n == -1 else self._utf8(n)

    def bytes_(self) -> bytes:
        n = self._length(self.int32(), False, "bytes")
        pos = self.skip(n)
        return bytes(self.buf[pos : pos + n])

    def nullable_bytes(self) -> bytes | None:
        n = self._length(self.int32(), True, "bytes")
        if n == -1:
            return None
        pos = self.skip(n)
        return bytes(self.buf[pos : pos + n])

    def records(self) -> memoryview | None:
        """A records field: a zero-copy slice of the frame, or None."""
        n = self._length(self.int32(), True, "records")
        if n == -1:
            return None
        pos = self.skip(n)
        return self.buf[pos : pos + n]

    def array_length(self, item_size_min: int, nullable: bool) -> int:
        """An array count (-1 for null), refused if the rest of the frame cannot hold it."""
        n = self._length(self.int32(), nullable, "array")
        if n > 0 and n * max(item_size_min, 1) > self.end - self.pos:
            raise ProtocolDecodeError(
                f"array of {n} items cannot fit in the {self.end - self.pos} bytes left"
            )
        return n


class Writer:
    """Builds an encoded frame: a ``bytearray`` plus attached zero-copy chunks."""

    __slots__ = ("_chunks", "_inline", "buf")

    def __init__(self, *, inline: bool = False, reserve: int = 0) -> None:
        self.buf = bytearray(reserve)
        self._chunks: list[Chunk | bytearray] = []
        self._inline = inline

    def int8(self, value: int) -> None:
        self.buf += _I8.pack(value)

    def int16(self, value: int) -> None:
        self.buf += _I16.pack(value)

    def int32(self, value: int) -> None:
        self.buf += _I32.pack(value)

    def int64(self, value: int) -> None:
        self.buf += _I64.pack(value)

    def uint32(self, value: int) -> None:
        self.buf += _U32.pack(value)

    def boolean(self, value: bool) -> None:
        self.buf += _BOOL.pack(value)

    def float64(self, value: float) -> None:
        self.buf += _F64.pack(value)

    def uuid(self, value: uuid.UUID) -> None:
        self.buf += value.bytes

    def string(self, value: str) -> None:
        if value is None:
            raise ValueError("null for a non-nullable string")
        data = value.encode("utf-8")
        if len(data) > INT16_MAX:
            raise ValueError(f"string of {len(data)} bytes is longer than {INT16_MAX}")
        self.buf += _I16.pack(len(data))
        self.buf += data

    def nullable_string(self, value: str | None) -> None:
        if value is None:
            self.buf += _NULL16
        else:
            self.string(value)

    def bytes_(self, value: bytes | bytearray | memoryview) -> None:
        if value is None:
            raise ValueError("null for non-nullable bytes")
        self.buf += _I32.pack(_nbytes(value))
        self.buf += value

    def nullable_bytes(self, value: bytes | bytearray | memoryview | None) -> None:
        if value is None:
            self.buf += _NULL32
        else:
            self.bytes_(value)

    def records(self, value: RecordsValue) -> None:
        """Null, one bytes-like payload, or a list of pieces (bytes-like or FileSlice)."""
        if value is None:
            self.buf += _NULL32
            return
        if isinstance(value, bytes | bytearray | memoryview):
            self.buf += _I32.pack(_nbytes(value))
            self.attach(value)
            return
        self.buf += _I32.pack(sum(_piece_size(piece) for piece in value))
        for piece in value:
            self.attach(piece)

    def attach(self, piece: bytes | bytearray | memoryview | FileSlice) -> None:
        """Append ``piece`` as its own chunk (copied into the buffer if ``inline``)."""
        if isinstance(piece, FileSlice):
            if self._inline:
                self.buf += piece.read()
                return
        elif self._inline or not piece:
            self.buf += piece
            return
        elif isinstance(piece, bytearray):
            piece = memoryview(piece)
        if self.buf:
            self._chunks.append(self.buf)
            self.buf = bytearray()
        self._chunks.append(piece)

    def chunks(self, *, framed: bool = False) -> list[Chunk]:
        """Finish: the chunks in order. ``framed`` fills the 4 reserved size bytes."""
        parts = self._chunks
        if self.buf:
            parts.append(self.buf)
        self.buf = bytearray()
        self._chunks = []
        if framed:
            total = sum(_piece_size(part) for part in parts) - 4
            if total > INT32_MAX:
                raise ValueError(f"frame of {total} bytes is larger than int32")
            head = parts[0]
            if not isinstance(head, bytearray):
                raise InvariantViolation("a framed writer starts with its own buffer")
            _I32.pack_into(head, 0, total)
        return [bytes(part) if isinstance(part, bytearray) else part for part in parts]


def _nbytes(value: bytes | bytearray | memoryview) -> int:
    return value.nbytes if isinstance(value, memoryview) else len(value)


def _piece_size(piece: Chunk | bytearray) -> int:
    if isinstance(piece, FileSlice):
        return piece.size
    return _nbytes(piece)


class Codec(Protocol):
    """What the schema DSL composes: a reader, a writer and sizing facts."""

    @property
    def fmt(self) -> str:
        """The ``struct`` code of a fixed-width type, else ``""``."""

    @property
    def size_min(self) -> int:
        """The fewest bytes one value can take on the wire."""

    def read(self, reader: Reader) -> Any: ...

    def write(self, writer: Writer, value: Any) -> None: ...


@dataclass(frozen=True, eq=False, slots=True)
class FieldType:
    """A primitive protocol type: its wire reader/writer and its implicit default.

    ``zero`` is the value a field of this type takes when the spec gives no
    default and the version does not carry the field (Kafka's rule: 0, false,
    empty string, empty bytes; records and explicitly-null defaults are None).
    """

    name: str
    read: Callable[[Reader], Any]
    write: Callable[[Writer, Any], None]
    size_min: int
    zero: Any
    fmt: str = ""
    nullable: bool = False

    def __repr__(self) -> str:
        return self.name.upper()


INT8 = FieldType("int8", Reader.int8, Writer.int8, 1, 0, "b")
INT16 = FieldType("int16", Reader.int16, Writer.int16, 2, 0, "h")
INT32 = FieldType("int32", Reader.int32, Writer.int32, 4, 0, "i")
INT64 = FieldType("int64", Reader.int64, Writer.int64, 8, 0, "q")
UINT32 = FieldType("uint32", Reader.uint32, Writer.uint32, 4, 0, "I")
BOOL = FieldType("bool", Reader.boolean, Writer.boolean, 1, False, "?")
FLOAT64 = FieldType("float64", Reader.float64, Writer.float64, 8, 0.0, "d")
UUID = FieldType("uuid", Reader.uuid, Writer.uuid, 16, uuid.UUID(int=0))
STRING = FieldType("string", Reader.string, Writer.string, 2, "")
NULLABLE_STRING = FieldType(
    "nullable_string", Reader.nullable_string, Writer.nullable_string, 2, "", nullable=True
)
BYTES = FieldType("bytes", Reader.bytes_, Writer.bytes_, 4, b"")
NULLABLE_BYTES = FieldType(
    "nullable_bytes", Reader.nullable_bytes, Writer.nullable_bytes, 4, b"", nullable=True
)
RECORDS = FieldType("records", Reader.records, Writer.records, 4, None, nullable=True)

_NULLABLE_VARIANT = {
    STRING: NULLABLE_STRING,
    NULLABLE_STRING: NULLABLE_STRING,
    BYTES: NULLABLE_BYTES,
    NULLABLE_BYTES: NULLABLE_BYTES,
    RECORDS: RECORDS,
}


def nullable_variant(kind: FieldType) -> FieldType:
    """The nullable form of a string, bytes or records type."""
    try:
        return _NULLABLE_VARIANT[kind]
    except KeyError:
        raise TypeError(f"{kind!r} has no nullable form") from None


class ArrayOf:
    """``[]T``: an ``int32`` count then the items; -1 is null when ``nullable``.

    Arrays of fixed-width integers are read and written with one ``struct`` call.
    """

    __slots__ = ("_item_fmt", "item", "nullable")

    fmt = ""
    size_min = 4

    def __init__(self, item: Codec, *, nullable: bool = False) -> None:
        self.item = item
        self.nullable = nullable
        self._item_fmt = item.fmt if item.fmt not in ("", "?") else ""

    def __repr__(self) -> str:
        return f"ArrayOf({self.item!r}{', nullable' if self.nullable else ''})"

    def read(self, reader: Reader) -> list[Any] | None:
        n = reader.array_length(self.item.size_min, self.nullable)
        if n == -1:
            return None
        if self._item_fmt:
            fmt = f">{n}{self._item_fmt}"
            return list(struct.unpack_from(fmt, reader.buf, reader.skip(struct.calcsize(fmt))))
        read = self.item.read
        return [read(reader) for _ in range(n)]

    def write(self, writer: Writer, value: Sequence[Any] | None) -> None:
        if value is None:
            if not self.nullable:
                raise ValueError("null for a non-nullable array")
            writer.buf += _NULL32
            return
        writer.buf += _I32.pack(len(value))
        if self._item_fmt:
            writer.buf += struct.pack(f">{len(value)}{self._item_fmt}", *value)
            return
        write = self.item.write
        for item in value:
            write(writer, item)
