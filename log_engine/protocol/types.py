"""The primitive types of Kafka's encodings, classic and flexible (KIP-482).

All integers are big-endian. Classic versions: strings carry an ``int16``
length, bytes, records and arrays an ``int32`` length; ``-1`` marks null where
the field is nullable. Flexible versions use the *compact* forms instead: an
unsigned varint holding length + 1 (``0`` marks null), and every struct ends
with a tagged-field section (an unsigned-varint count, then per field its tag,
its size and its bytes; ``00`` when empty). The schema DSL picks the classic or
compact form of each type per version (see :func:`compact_variant`).

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

from log_engine.errors import ProtocolDecodeError
from log_engine.file_slice import FileSlice
from log_engine.invariants import InvariantViolation

Chunk = bytes | memoryview | FileSlice
"""A piece of an encoded frame: bytes-like, or a file range to ``sendfile``."""

RecordsValue = bytes | bytearray | memoryview | Sequence[bytes | memoryview | FileSlice] | None
"""What a records field accepts when encoding (None = null)."""

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_BOOL = struct.Struct(">?")
_F64 = struct.Struct(">d")
_NULL16 = _I16.pack(-1)
_NULL32 = _I32.pack(-1)
INT16_MAX = 0x7FFF
INT32_MAX = 0x7FFFFFFF
UVARINT32_MAX = 0xFFFFFFFF
_UVARINT_ONE_BYTE = tuple(bytes((n,)) for n in range(0x80))
EMPTY_TAGGED_FIELDS = b"\x00"
"""A tagged-field section with no fields: a count of zero."""


def uvarint_bytes(value: int) -> bytes:
    """An unsigned varint (7 bits a byte, low group first, high bit = more)."""
    if 0 <= value < 0x80:
        return _UVARINT_ONE_BYTE[value]
    if 0x80 <= value < 0x4000:  # lengths of up to 16 KiB: two bytes
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    if value < 0 or value > UVARINT32_MAX:
        raise ValueError(f"unsigned varint {value} outside [0, {UVARINT32_MAX}]")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


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

    def uint16(self) -> int:
        return int(_U16.unpack_from(self.buf, self.skip(2))[0])

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

    def _slice(self, n: int) -> memoryview:
        """The next ``n`` bytes of the frame (zero-copy), the cursor after them."""
        pos = self.skip(n)
        return self.buf[pos : pos + n]

    def _utf8(self, n: int) -> str:
        pos = self.pos
        try:
            return str(self._slice(n), "utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolDecodeError(f"invalid UTF-8 in string at offset {pos}") from exc

    def _array_fits(self, n: int, item_size_min: int) -> int:
        """``n``, refused if the rest of the frame cannot hold that many items."""
        if n > 0 and n * max(item_size_min, 1) > self.end - self.pos:
            raise ProtocolDecodeError(
                f"array of {n} items cannot fit in the {self.end - self.pos} bytes left"
            )
        return n

    def string(self) -> str:
        return self._utf8(self._length(self.int16(), False, "string"))

    def nullable_string(self) -> str | None:
        n = self._length(self.int16(), True, "string")
        return None if n == -1 else self._utf8(n)

    def bytes_(self) -> bytes:
        return bytes(self._slice(self._length(self.int32(), False, "bytes")))

    def nullable_bytes(self) -> bytes | None:
        n = self._length(self.int32(), True, "bytes")
        return None if n == -1 else bytes(self._slice(n))

    def records(self) -> memoryview | None:
        """A records field: a zero-copy slice of the frame, or None."""
        n = self._length(self.int32(), True, "records")
        return None if n == -1 else self._slice(n)

    def array_length(self, item_size_min: int, nullable: bool) -> int:
        """An array count (-1 for null), refused if the rest of the frame cannot hold it."""
        return self._array_fits(self._length(self.int32(), nullable, "array"), item_size_min)

    # -- flexible versions (compact encodings) -----------------------------------------

    def uvarint(self) -> int:
        """An unsigned varint of at most 5 bytes (a uint32)."""
        buf = self.buf
        pos = self.pos
        end = self.end
        if pos >= end:
            raise ProtocolDecodeError(f"truncated: varint needed at offset {pos}, 0 bytes left")
        byte = buf[pos]
        if byte < 0x80:
            self.pos = pos + 1
            return int(byte)
        value = byte & 0x7F
        shift = 7
        start = pos
        while True:
            pos += 1
            if pos >= end:
                raise ProtocolDecodeError(f"truncated varint at offset {start}")
            byte = buf[pos]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
            if shift > 28:
                raise ProtocolDecodeError(f"varint longer than 5 bytes at offset {start}")
        if value > UVARINT32_MAX:
            raise ProtocolDecodeError(f"varint {value} at offset {start} overflows uint32")
        self.pos = pos + 1
        return value

    def _compact_length(self, nullable: bool, what: str) -> int:
        """A compact length (varint N+1): N, or -1 for null when ``nullable``."""
        n = self.uvarint() - 1
        if n == -1 and not nullable:
            raise ProtocolDecodeError(f"null {what} at offset {self.pos} is not allowed")
        return n

    def compact_string(self) -> str:
        return self._utf8(self._compact_length(False, "string"))

    def compact_nullable_string(self) -> str | None:
        n = self._compact_length(True, "string")
        return None if n == -1 else self._utf8(n)

    def compact_bytes(self) -> bytes:
        return bytes(self._slice(self._compact_length(False, "bytes")))

    def compact_nullable_bytes(self) -> bytes | None:
        n = self._compact_length(True, "bytes")
        return None if n == -1 else bytes(self._slice(n))

    def compact_records(self) -> memoryview | None:
        """A compact records field: a zero-copy slice of the frame, or None."""
        n = self._compact_length(True, "records")
        return None if n == -1 else self._slice(n)

    def compact_array_length(self, item_size_min: int, nullable: bool) -> int:
        """A compact array count (-1 for null), refused if the frame cannot hold it."""
        return self._array_fits(self._compact_length(nullable, "array"), item_size_min)

    def tagged_fields(self) -> list[tuple[int, memoryview]]:
        """A tagged-field section: ``(tag, data)`` pairs, tags strictly ascending."""
        count = self.uvarint()
        if count == 0:
            return []
        if count > self.end - self.pos:
            raise ProtocolDecodeError(f"{count} tagged fields cannot fit in the bytes left")
        fields: list[tuple[int, memoryview]] = []
        last = -1
        for _ in range(count):
            tag = self.uvarint()
            if tag <= last:
                raise ProtocolDecodeError(f"tag {tag} after tag {last}: tags must ascend")
            last = tag
            size = self.uvarint()
            pos = self.skip(size)
            fields.append((tag, self.buf[pos : pos + size]))
        return fields


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

    def uint16(self, value: int) -> None:
        self.buf += _U16.pack(value)

    def uint32(self, value: int) -> None:
        self.buf += _U32.pack(value)

    def boolean(self, value: bool) -> None:
        self.buf += _BOOL.pack(value)

    def float64(self, value: float) -> None:
        self.buf += _F64.pack(value)

    def uuid(self, value: uuid.UUID) -> None:
        self.buf += value.bytes

    def string(self, value: str) -> None:
        data = _string_bytes(value)
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
        self._pieces(value, _I32.pack)

    # -- flexible versions (compact encodings) -----------------------------------------

    def uvarint(self, value: int) -> None:
        self.buf += uvarint_bytes(value)

    def compact_string(self, value: str) -> None:
        data = _string_bytes(value)
        self.buf += uvarint_bytes(len(data) + 1)
        self.buf += data

    def compact_nullable_string(self, value: str | None) -> None:
        if value is None:
            self.buf += b"\x00"
        else:
            self.compact_string(value)

    def compact_bytes(self, value: bytes | bytearray | memoryview) -> None:
        if value is None:
            raise ValueError("null for non-nullable bytes")
        self.buf += uvarint_bytes(_nbytes(value) + 1)
        self.buf += value

    def compact_nullable_bytes(self, value: bytes | bytearray | memoryview | None) -> None:
        if value is None:
            self.buf += b"\x00"
        else:
            self.compact_bytes(value)

    def compact_records(self, value: RecordsValue) -> None:
        """As :meth:`records`, with a compact (varint N+1) length."""
        if value is None:
            self.buf += b"\x00"
            return
        self._pieces(value, _compact_length_bytes)

    def _pieces(
        self,
        value: bytes | bytearray | memoryview | Sequence[bytes | memoryview | FileSlice],
        length_bytes: Callable[[int], bytes],
    ) -> None:
        """A records payload (one piece or several) after its length as ``length_bytes`` says."""
        if isinstance(value, bytes | bytearray | memoryview):
            self.buf += length_bytes(_nbytes(value))
            self.attach(value)
            return
        self.buf += length_bytes(sum(_piece_size(piece) for piece in value))
        for piece in value:
            self.attach(piece)

    def tagged_fields(self, fields: Sequence[tuple[int, bytes]]) -> None:
        """A tagged-field section from ``(tag, encoded value)`` pairs in ascending tag order."""
        self.buf += uvarint_bytes(len(fields))
        for tag, data in fields:
            self.buf += uvarint_bytes(tag)
            self.buf += uvarint_bytes(len(data))
            self.buf += data

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


def _string_bytes(value: str) -> bytes:
    """``value`` as UTF-8, refused if null or longer than Kafka's limit (every encoding)."""
    if value is None:
        raise ValueError("null for a non-nullable string")
    data = value.encode("utf-8")
    if len(data) > INT16_MAX:
        raise ValueError(f"string of {len(data)} bytes is longer than {INT16_MAX}")
    return data


def _compact_length_bytes(n: int) -> bytes:
    """A compact length: the varint of N+1."""
    return uvarint_bytes(n + 1)


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
UINT16 = FieldType("uint16", Reader.uint16, Writer.uint16, 2, 0, "H")
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

COMPACT_STRING = FieldType("compact_string", Reader.compact_string, Writer.compact_string, 1, "")
COMPACT_NULLABLE_STRING = FieldType(
    "compact_nullable_string",
    Reader.compact_nullable_string,
    Writer.compact_nullable_string,
    1,
    "",
    nullable=True,
)
COMPACT_BYTES = FieldType("compact_bytes", Reader.compact_bytes, Writer.compact_bytes, 1, b"")
COMPACT_NULLABLE_BYTES = FieldType(
    "compact_nullable_bytes",
    Reader.compact_nullable_bytes,
    Writer.compact_nullable_bytes,
    1,
    b"",
    nullable=True,
)
COMPACT_RECORDS = FieldType(
    "compact_records", Reader.compact_records, Writer.compact_records, 1, None, nullable=True
)

_NULLABLE_VARIANT = {
    STRING: NULLABLE_STRING,
    NULLABLE_STRING: NULLABLE_STRING,
    BYTES: NULLABLE_BYTES,
    NULLABLE_BYTES: NULLABLE_BYTES,
    RECORDS: RECORDS,
}
_COMPACT_VARIANT = {
    STRING: COMPACT_STRING,
    NULLABLE_STRING: COMPACT_NULLABLE_STRING,
    BYTES: COMPACT_BYTES,
    NULLABLE_BYTES: COMPACT_NULLABLE_BYTES,
    RECORDS: COMPACT_RECORDS,
}


def compact_variant(kind: FieldType) -> FieldType:
    """The form of ``kind`` in flexible versions (fixed-width types are unchanged)."""
    return _COMPACT_VARIANT.get(kind, kind)


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
        return self._read_items(reader, n)

    def write(self, writer: Writer, value: Sequence[Any] | None) -> None:
        if value is None:
            if not self.nullable:
                raise ValueError("null for a non-nullable array")
            writer.buf += _NULL32
            return
        writer.buf += _I32.pack(len(value))
        self._write_items(writer, value)


    def _read_items(self, reader: Reader, n: int) -> list[Any]:
        """The ``n`` items after the count, as one struct unpack for fixed-width items."""
        if self._item_fmt:
            fmt = f">{n}{self._item_fmt}"
            return list(struct.unpack_from(fmt, reader.buf, reader.skip(struct.calcsize(fmt))))
        read = self.item.read
        return [read(reader) for _ in range(n)]

    def _write_items(self, writer: Writer, value: Sequence[Any]) -> None:
        """The items after the count, as one struct pack for fixed-width items."""
        if self._item_fmt:
            writer.buf += struct.pack(f">{len(value)}{self._item_fmt}", *value)
            return
        write = self.item.write
        for item in value:
            write(writer, item)

class CompactArrayOf(ArrayOf):
    """``[]T`` in flexible versions: an unsigned-varint count + 1 (0 = null), then the items."""

    __slots__ = ()

    size_min = 1

    def __repr__(self) -> str:
        return f"CompactArrayOf({self.item!r}{', nullable' if self.nullable else ''})"

    def read(self, reader: Reader) -> list[Any] | None:
        n = reader.compact_array_length(self.item.size_min, self.nullable)
        if n == -1:
            return None
        return self._read_items(reader, n)

    def write(self, writer: Writer, value: Sequence[Any] | None) -> None:
        if value is None:
            if not self.nullable:
                raise ValueError("null for a non-nullable array")
            writer.buf += b"\x00"
            return
        writer.buf += uvarint_bytes(len(value) + 1)
        self._write_items(writer, value)
