"""RecordBatch v2 (magic 2): build, decode, validate and stamp batches.

Byte layout (big-endian; offsets into the batch)::

     0 baseOffset int64        | not covered by the CRC; the broker stamps it
     8 batchLength int32       | bytes after this field (batch size = batchLength + 12)
    12 partitionLeaderEpoch int32  (broker-stamped, not covered by the CRC)
    16 magic int8 (= 2)
    17 crc uint32              | CRC-32C of bytes [21, end)
    21 attributes int16        | bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control
    23 lastOffsetDelta int32
    27 baseTimestamp int64
    35 maxTimestamp int64
    43 producerId int64
    51 producerEpoch int16
    53 baseSequence int32
    57 recordsCount int32
    61 records (compressed as one stream when a codec is set)

The broker never decodes records: it reads the header (:func:`read_header`),
checks lengths and CRC (:func:`validate_batch`), walks the records' structure on
produce (:mod:`log_engine.records.record_check`) and rewrites the fields outside
the CRC (:func:`stamp_base_offset`, :func:`stamp_leader_epoch`). Clients and the
compaction cleaner use :func:`build_batch` and :func:`decode_batch`.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import pairwise
from typing import NamedTuple

from crc32c import crc32c

from log_engine.errors import (
    CorruptMessageError,
    CrcMismatchError,
    InvalidMagicError,
    TruncatedBatchError,
)
from log_engine.records.compression import Compression, compress, decompress
from log_engine.records.varint import read_varint, read_varlong, write_varint, write_varlong

_HEADER = struct.Struct(">qiibIhiqqqhii")
BATCH_HEADER_SIZE = _HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: bytes not counted by batchLength
MAGIC = 2
_CRC_START = 21
_MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD
_ATTR_COMPRESSION_MASK = 0x07
_ATTR_TIMESTAMP_TYPE = 0x08
_ATTR_TRANSACTIONAL = 0x10
_ATTR_CONTROL = 0x20
_ATTR_DELETE_HORIZON = 0x40
_NO_TIMESTAMP = -1

_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")

Header = tuple[str, bytes | None]


class TimestampType(IntEnum):
    """Bit 3 of the attributes: who set the timestamps."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The 61-byte header of a stored or received batch, decoded."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Total bytes of the batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & _ATTR_COMPRESSION_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType(1 if self.attributes & _ATTR_TIMESTAMP_TYPE else 0)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _ATTR_CONTROL)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & _ATTR_DELETE_HORIZON)


class Record(NamedTuple):
    """One record: what producers send and consumers receive.

    ``offset`` is absolute once read from a log; ``headers`` keep their order and
    may repeat a key, as Kafka allows. A NamedTuple because consumers create one
    per record: it is several times cheaper to build than a frozen dataclass.
    """

    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    timestamp: int = _NO_TIMESTAMP
    offset: int = 0


def read_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Decode the header at ``pos`` and check magic and lengths; the CRC is not checked.

    Raises :class:`TruncatedBatchError` when fewer than 61 bytes remain,
    :class:`InvalidMagicError` for a legacy or unknown magic, and
    :class:`CorruptMessageError` for an impossible batchLength.
    """
    if len(buf) - pos < BATCH_HEADER_SIZE:
        raise TruncatedBatchError(
            f"batch header needs {BATCH_HEADER_SIZE} bytes, {len(buf) - pos} remain"
        )
    header = BatchHeader(*_HEADER.unpack_from(buf, pos))
    if header.magic != MAGIC:
        raise InvalidMagicError(f"record batch magic is {header.magic}, only magic 2 is supported")
    if header.batch_length < _MIN_BATCH_LENGTH:
        raise CorruptMessageError(f"batchLength {header.batch_length} is below the header size")
    if header.records_count < 0 or header.last_offset_delta < 0:
        raise CorruptMessageError(
            f"negative record count ({header.records_count}) or offset delta "
            f"({header.last_offset_delta})"
        )
    return header


def validate_batch(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Read the header at ``pos`` and verify the batch is complete and its CRC matches."""
    header = read_header(buf, pos)
    end = pos + header.size
    if end > len(buf):
        raise TruncatedBatchError(
            f"batch at byte {pos} declares {header.size} bytes, {len(buf) - pos} remain"
        )
    actual = crc32c(memoryview(buf)[pos + _CRC_START : end])
    if actual != header.crc:
        raise CrcMismatchError(
            f"batch at byte {pos}: CRC-32C is {actual:#010x}, header says {header.crc:#010x}"
        )
    return header


def iter_batches(
    buf: bytes | bytearray | memoryview, *, verify_crc: bool = True
) -> Iterator[tuple[int, BatchHeader]]:
    """Yield ``(position, header)`` for each batch in a concatenation of batches.

    Every byte must belong to a complete, valid batch; anything else raises a
    :class:`CorruptMessageError` subclass (use this on produce requests).
    """
    pos = 0
    check = validate_batch if verify_crc else _read_complete
    while pos < len(buf):
        header = check(buf, pos)
        yield pos, header
        pos += header.size


def _read_complete(buf: bytes | bytearray | memoryview, pos: int) -> BatchHeader:
    header = read_header(buf, pos)
    if pos + header.size > len(buf):
        raise TruncatedBatchError(f"batch at byte {pos} is truncated")
    return header


def stamp_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Overwrite the baseOffset of the batch at ``pos`` (outside the CRC)."""
    _INT64.pack_into(buf, pos, base_offset)


def stamp_leader_epoch(buf: bytearray | memoryview, pos: int, epoch: int) -> None:
    """Overwrite the partitionLeaderEpoch of the batch at ``pos`` (outside the CRC)."""
    _INT32.pack_into(buf, pos + 12, epoch)


def stamp_log_append_time(buf: bytearray | memoryview, pos: int, now_ms: int) -> None:
    """Mark the batch at ``pos`` as LogAppendTime with ``now_ms`` and recompute its CRC.

    Both the attributes and maxTimestamp are covered by the CRC, so this is the
    one broker-side rewrite that costs a CRC pass (still no record decoding).
    """
    header = read_header(buf, pos)
    _INT16.pack_into(buf, pos + 21, header.attributes | _ATTR_TIMESTAMP_TYPE)
    _INT64.pack_into(buf, pos + 35, now_ms)
    end = pos + header.size
    _UINT32.pack_into(buf, pos + 17, crc32c(memoryview(buf)[pos + _CRC_START : end]))


def build_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    keep_offsets: bool = False,
    now_ms: int | None = None,
) -> bytes:
    """Encode ``records`` as one batch.

    Offsets are ``base_offset + index``, or with ``keep_offsets`` each record's
    own ``offset`` (strictly increasing, >= ``base_offset``): the compaction
    cleaner rewrites batches that way and keeps the gaps. Records whose
    timestamp is -1 get ``now_ms`` (default: the wall clock), as a producer does.
    """
    if not records:
        raise ValueError("a record batch needs at least one record")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    timestamps = [r.timestamp if r.timestamp >= 0 else now for r in records]
    base_timestamp = timestamps[0]
    deltas = _offset_deltas(records, base_offset) if keep_offsets else range(len(records))
    body = bytearray()
    for record, ts, delta in zip(records, timestamps, deltas, strict=True):
        _encode_record(record, ts - base_timestamp, delta, body)
    payload = compress(compression, bytes(body))
    attributes = int(compression) | (_ATTR_TIMESTAMP_TYPE if timestamp_type else 0)
    if is_transactional:
        attributes |= _ATTR_TRANSACTIONAL
    if is_control:
        attributes |= _ATTR_CONTROL
    return assemble_batch(
        payload,
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        attributes=attributes,
        last_offset_delta=deltas[-1],
        base_timestamp=base_timestamp,
        max_timestamp=max(timestamps),
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=len(records),
    )


def assemble_batch(
    payload: bytes | bytearray | memoryview,
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    attributes: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    records_count: int,
) -> bytes:
    """Prepend the 61-byte header to an encoded (maybe compressed) records payload
    and compute the CRC-32C: the one place a batch's header is written."""
    out = bytearray(BATCH_HEADER_SIZE)
    _HEADER.pack_into(
        out,
        0,
        base_offset,
        BATCH_HEADER_SIZE - LOG_OVERHEAD + len(payload),
        partition_leader_epoch,
        MAGIC,
        0,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    )
    out += payload
    _UINT32.pack_into(out, 17, crc32c(memoryview(out)[_CRC_START:]))
    return bytes(out)


def _offset_deltas(records: Sequence[Record], base_offset: int) -> list[int]:
    deltas = [r.offset - base_offset for r in records]
    if deltas[0] < 0 or any(b <= a for a, b in pairwise(deltas)):
        raise ValueError("keep_offsets needs strictly increasing offsets from base_offset")
    return deltas


def _encode_record(record: Record, ts_delta: int, offset_delta: int, out: bytearray) -> None:
    body = bytearray(b"\x00")  # attributes
    write_varlong(ts_delta, body)
    write_varint(offset_delta, body)
    _write_nullable(record.key, body)
    _write_nullable(record.value, body)
    write_varint(len(record.headers), body)
    for name, value in record.headers:
        encoded = name.encode()
        write_varint(len(encoded), body)
        body += encoded
        _write_nullable(value, body)
    write_varint(len(body), out)
    out += body


def _write_nullable(data: bytes | None, out: bytearray) -> None:
    if data is None:
        write_varint(-1, out)
    else:
        write_varint(len(data), out)
        out += data


def decode_batch(
    buf: bytes | bytearray | memoryview, pos: int = 0, *, verify_crc: bool = True
) -> tuple[BatchHeader, list[Record]]:
    """Decode the batch at ``pos`` into its header and records (with absolute offsets)."""
    header = validate_batch(buf, pos) if verify_crc else _read_complete(buf, pos)
    raw = memoryview(buf)[pos + BATCH_HEADER_SIZE : pos + header.size]
    # One copy to bytes up front: slicing bytes is cheaper than memoryview -> bytes per field.
    data = decompress(header.compression, raw) if header.compression else bytes(raw)
    log_append = header.timestamp_type == TimestampType.LOG_APPEND_TIME
    records: list[Record] = []
    cursor = _decode_records(data, header, log_append, records)
    if cursor != len(data):
        raise CorruptMessageError(
            f"batch at offset {header.base_offset}: "
            f"{len(data) - cursor} bytes after the last record"
        )
    return header, records


class _Uncommon(Exception):
    """Internal: this record leaves :func:`_decode_records`' fast path."""


_UNCOMMON = _Uncommon()


def _decode_records(
    data: bytes, header: BatchHeader, log_append: bool, records: list[Record]
) -> int:
    """Decode ``header.records_count`` records into ``records``; return the end position.

    The hot path of every consumer, in one loop with no call per field: records
    with a one-byte key length, a one- or two-byte value length and no headers
    (nearly all of them) are decoded inline; longer deltas go through the varint
    readers. Any other record, including
    a malformed one, goes through :func:`_decode_record`, which decodes it in
    full or raises :class:`CorruptMessageError` exactly as before.
    """
    n = len(data)
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    max_timestamp = header.max_timestamp
    new = tuple.__new__
    append = records.append
    no_headers: tuple[Header, ...] = ()
    cursor = 0
    for _ in range(header.records_count):
        try:
            p = cursor
            b = data[p]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                b2 = data[p + 1]
                if b2 >= 0x80:
                    raise _UNCOMMON
                raw = (b & 0x7F) | (b2 << 7)
                length = (raw >> 1) ^ -(raw & 1)
                p += 2
            end = p + length
            if length < 0 or end > n:
                raise _UNCOMMON
            # p: attributes, then the timestamp and offset deltas.
            p += 1
            b = data[p]
            if b < 0x80:
                delta = (b >> 1) ^ -(b & 1)
                p += 1
            elif (b2 := data[p + 1]) < 0x80:
                raw = (b & 0x7F) | (b2 << 7)
                delta = (raw >> 1) ^ -(raw & 1)
                p += 2
            else:
                delta, p = read_varlong(data, p)
            timestamp = max_timestamp if log_append else base_timestamp + delta
            b = data[p]
            if b < 0x80:
                offset = base_offset + ((b >> 1) ^ -(b & 1))
                p += 1
            elif (b2 := data[p + 1]) < 0x80:
                raw = (b & 0x7F) | (b2 << 7)
                offset = base_offset + ((raw >> 1) ^ -(raw & 1))
                p += 2
            else:
                delta, p = read_varint(data, p)
                offset = base_offset + delta
            b = data[p]
            if b == 1:
                key = None
                p += 1
            elif b < 0x80 and not b & 1:
                q = p + 1 + (b >> 1)
                key = data[p + 1 : q]
                p = q
            else:
                raise _UNCOMMON
            b = data[p]
            if b == 1:
                value = None
                p += 1
            elif b < 0x80:
                if b & 1:
                    raise _UNCOMMON
                q = p + 1 + (b >> 1)
                value = data[p + 1 : q]
                p = q
            else:
                b2 = data[p + 1]
                if b & 1 or b2 >= 0x80:
                    raise _UNCOMMON
                q = p + 2 + (((b & 0x7F) | (b2 << 7)) >> 1)
                value = data[p + 2 : q]
                p = q
            # A zero header count must be the record's last byte.
            if p + 1 != end or data[p]:
                raise _UNCOMMON
            append(new(Record, (key, value, no_headers, timestamp, offset)))
            cursor = end
        except (_Uncommon, IndexError):
            record, cursor = _decode_record(data, cursor, header, log_append)
            append(record)
    return cursor


def _decode_record(
    data: bytes, pos: int, header: BatchHeader, log_append: bool
) -> tuple[Record, int]:
    """Decode one record at ``pos``; the hot path of every consumer.

    Lengths and deltas are nearly always one-byte varints, so those are decoded
    inline and only longer ones go through :func:`read_varint`.
    """
    length, pos = _short_varint(data, pos)
    end = pos + length
    if length < 0 or end > len(data):
        raise CorruptMessageError(f"record length {length} runs past the batch")
    pos += 1  # attributes
    byte = data[pos]
    if byte < 0x80:
        ts_delta, pos = (byte >> 1) ^ -(byte & 1), pos + 1
    else:
        ts_delta, pos = read_varlong(data, pos)
    byte = data[pos]
    if byte < 0x80:
        offset_delta, pos = (byte >> 1) ^ -(byte & 1), pos + 1
    else:
        offset_delta, pos = read_varint(data, pos)
    key, pos = _read_nullable(data, pos, end)
    value, pos = _read_nullable(data, pos, end)
    count, pos = _short_varint(data, pos)
    headers: tuple[Header, ...] = ()
    if count:
        headers, pos = _read_headers(data, pos, end, count)
    if pos != end:
        raise CorruptMessageError("record length does not match its fields")
    timestamp = header.max_timestamp if log_append else header.base_timestamp + ts_delta
    return Record(key, value, headers, timestamp, header.base_offset + offset_delta), pos


def _short_varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint, with one- and two-byte values (lengths up to 8191) decoded inline."""
    byte = data[pos]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), pos + 1
    if pos + 1 < len(data) and data[pos + 1] < 0x80:
        raw = (byte & 0x7F) | (data[pos + 1] << 7)
        return (raw >> 1) ^ -(raw & 1), pos + 2
    return read_varint(data, pos)


def _read_headers(data: bytes, pos: int, end: int, count: int) -> tuple[tuple[Header, ...], int]:
    if count < 0:
        raise CorruptMessageError(f"negative header count {count}")
    headers: list[Header] = []
    for _ in range(count):
        name, pos = _read_nullable(data, pos, end)
        if name is None:
            raise CorruptMessageError("record header with a null key")
        hvalue, pos = _read_nullable(data, pos, end)
        headers.append((name.decode("utf-8", errors="replace"), hvalue))
    return tuple(headers), pos


def _read_nullable(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    if pos >= end:
        raise CorruptMessageError("record field runs past the record")
    length, pos = _short_varint(data, pos)
    if length < 0:
        return None, pos
    if pos + length > end:
        raise CorruptMessageError("record field runs past the record")
    return data[pos : pos + length], pos + length
