"""The records of a produced batch, checked for structure without decoding them.

DESIGN.md decision 2 says the broker never decodes records on the hot path.
This module is the one place it bends, and why: a batch whose CRC is valid but
whose records are garbage (a bad count, a length running past the batch, a
truncated varint, offset deltas out of order) would be stored, and every reader
of the partition would then stop at it for good (kcat stalls, Kafka clients
raise CorruptMessageError, a sink task restart-loops without writing even the
records before it). Kafka's broker refuses such a batch, and so does ours.

What is still never done: no record object is created, no key, value or header
is copied or decoded, nothing is re-encoded, and the stored bytes are the bytes
the producer sent. The check walks the varints of each record once and compares
lengths and offset deltas; it runs in C (``_record_check``, built by
``setup.py``) and falls back to :func:`check_records_py` when the extension is
not built. Both return exactly the same answers (a hypothesis test holds them
to it).

Per record (all varints zigzag; a varint is at most 5 bytes, a varlong 10, and
the last byte may not carry bits beyond 32 / 64)::

    length varint          >= 0, the record fits in the batch
    attributes int8
    timestampDelta varlong
    offsetDelta varint     == the record's index in the batch (0, 1, ..., n-1)
    keyLength varint       >= -1 (-1: null; refused when keys are required)
    key bytes
    valueLength varint     >= -1
    value bytes
    headerCount varint     >= 0
    headers: keyLength varint >= 0, key, valueLength varint >= -1, value
    ... and the fields end exactly at ``length``.

After ``count`` records the data must end.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from log_engine.errors import MalformedRecordError
from log_engine.records.batch import BATCH_HEADER_SIZE, BatchHeader
from log_engine.records.compression import BoundedDecompressor


class Problem(IntEnum):
    """What :func:`check_records` found (``OK`` or the first problem)."""

    OK = 0
    TRUNCATED = 1  # the data ends before the declared record count (or mid-field)
    BAD_VARINT = 2  # a varint longer than its type allows
    BAD_LENGTH = 3  # a record length below 0 or past the end of the data
    LENGTH_MISMATCH = 4  # the record's fields do not end exactly at its length
    OFFSET_DELTA = 5  # an offset delta other than the record's index
    NEGATIVE_SIZE = 6  # a key, value or header length below -1, or a header count below 0
    NULL_KEY = 7  # a record without a key where keys are required (compacted topics)
    NULL_HEADER_KEY = 8  # a header whose key is null
    TRAILING_BYTES = 9  # bytes left after the declared record count


DESCRIPTIONS = {
    Problem.TRUNCATED: "the records end before the declared record count",
    Problem.BAD_VARINT: "a varint is longer than its type allows",
    Problem.BAD_LENGTH: "the record length is negative or runs past the batch",
    Problem.LENGTH_MISMATCH: "the record's fields do not fill its declared length exactly",
    Problem.OFFSET_DELTA: "the offset delta is not the record's index in the batch",
    Problem.NEGATIVE_SIZE: "a key, value or header length, or the header count, is negative",
    Problem.NULL_KEY: "a compacted topic needs a key on every record",
    Problem.NULL_HEADER_KEY: "a record header has a null key",
    Problem.TRAILING_BYTES: "bytes remain after the declared record count",
}

_VARINT_BYTES = 5
_VARLONG_BYTES = 10


class _Found(Exception):
    """Internal: carries the problem out of the walk."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem


def _varint(
    data: bytes | memoryview,
    pos: int,
    end: int,
    max_bytes: int,
    short: Problem = Problem.LENGTH_MISMATCH,
) -> tuple[int, int]:
    """A zigzag varint in ``[pos, end)``; ``(value, next_pos)``; ``short`` if it runs past."""
    result = 0
    shift = 0
    last = max_bytes - 1
    for i in range(max_bytes):
        if pos >= end:
            raise _Found(short)
        byte = data[pos]
        pos += 1
        if i == last and byte > (0x0F if max_bytes == _VARINT_BYTES else 0x01):
            raise _Found(Problem.BAD_VARINT)
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
    raise AssertionError("unreachable: the last byte was checked above")


def check_records_py(data: bytes | memoryview, count: int, require_keys: bool) -> tuple[int, int]:
    """Walk ``count`` records in ``data``: ``(Problem, record index)``, ``(0, -1)`` if sound.

    The reference implementation of the C extension's ``check_records``.
    """
    if count < 0:
        raise ValueError("record count must not be negative")
    n = len(data)
    pos = 0
    index = 0
    try:
        for index in range(count):
            # A fast path for the common shape: a one-byte record length.
            b = data[pos] if pos < n else -1
            if 0 <= b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                length, pos = _varint(data, pos, n, _VARINT_BYTES, Problem.TRUNCATED)
            end = pos + length
            if length < 0 or end > n:
                raise _Found(Problem.BAD_LENGTH)
            pos = _check_body(data, pos + 1, end, index, require_keys)
            if pos != end:
                raise _Found(Problem.LENGTH_MISMATCH)
    except _Found as found:
        return int(found.problem), index
    if pos != n:
        return int(Problem.TRAILING_BYTES), count
    return int(Problem.OK), -1


def _check_body(
    data: bytes | memoryview, pos: int, end: int, index: int, require_keys: bool
) -> int:
    """The fields after the attributes byte; returns where they end."""
    if pos > end:
        raise _Found(Problem.LENGTH_MISMATCH)
    _, pos = _varint(data, pos, end, _VARLONG_BYTES)
    delta, pos = _varint(data, pos, end, _VARINT_BYTES)
    if delta != index:
        raise _Found(Problem.OFFSET_DELTA)
    size, pos = _varint(data, pos, end, _VARINT_BYTES)
    if size == -1 and require_keys:
        raise _Found(Problem.NULL_KEY)
    pos = _skip(pos, size, end)
    size, pos = _varint(data, pos, end, _VARINT_BYTES)
    pos = _skip(pos, size, end)
    headers, pos = _varint(data, pos, end, _VARINT_BYTES)
    if headers < 0:
        raise _Found(Problem.NEGATIVE_SIZE)
    for _ in range(headers):
        size, pos = _varint(data, pos, end, _VARINT_BYTES)
        if size == -1:
            raise _Found(Problem.NULL_HEADER_KEY)
        pos = _skip(pos, size, end)
        size, pos = _varint(data, pos, end, _VARINT_BYTES)
        pos = _skip(pos, size, end)
    return pos


def _skip(pos: int, size: int, end: int) -> int:
    if size < -1:
        raise _Found(Problem.NEGATIVE_SIZE)
    if size > 0:
        pos += size
        if pos > end:
            raise _Found(Problem.LENGTH_MISMATCH)
    return pos


def _load_check() -> tuple[Callable[[bytes | memoryview, int, bool], tuple[int, int]], bool]:
    try:
        from log_engine.records._record_check import check_records as native
    except ImportError:
        return check_records_py, False
    return native, True


check_records, NATIVE = _load_check()
"""The checker in use: the C extension's when built (``NATIVE``), else the fallback."""

MAX_RECORDS_BYTES = 128 * 1024 * 1024
"""The most a produced batch's records may decompress to (MESSAGE_TOO_LARGE beyond).

Kafka has no such bound; without one a 1 MB zstd batch of zeros inflates to
gigabytes in the broker. The check is synchronous on the event loop, so this is
also the most decompressed data the broker holds at once. A legitimate batch of
128 MiB uncompressed is far beyond any client's batch.size."""

_decompressor = BoundedDecompressor(MAX_RECORDS_BYTES)


def check_batch_records(
    buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader, *, require_keys: bool
) -> None:
    """Check the records of the batch at ``pos`` (header already read and complete).

    Compressed records are decompressed first (CorruptMessageError if they do
    not decompress, MessageTooLargeError past :data:`MAX_RECORDS_BYTES`). Raises
    :class:`MalformedRecordError` naming the first bad record. ``require_keys``:
    refuse records without a key (compacted topics).
    """
    raw = memoryview(buf)[pos + BATCH_HEADER_SIZE : pos + header.size]
    data = _decompressor.decompress(header.compression, raw) if header.compression else raw
    problem, index = check_records(data, header.records_count, require_keys)
    if problem:
        where = "after the last record" if index >= header.records_count else f"record {index}"
        raise MalformedRecordError(
            f"batch of {header.records_count} records, {where}: {DESCRIPTIONS[Problem(problem)]}",
            index,
        )
