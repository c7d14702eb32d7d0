"""The produce path up to the write: validate batches, assign offsets, stamp headers.

Nothing here decodes records. Validation (:func:`validate_append`) checks every
batch of a request (magic, lengths, CRC-32C, ``max.message.bytes``, record
count) before anything is written, so an append is all or nothing.

Stamping (:func:`assign_offsets`) rewrites only the fields outside the CRC:
baseOffset and partitionLeaderEpoch. To avoid copying the request, the
stamped 16-byte prefix of each batch (baseOffset, batchLength, leader epoch)
and the untouched rest are returned as separate buffers for one ``pwritev``.
LogAppendTime changes CRC-covered fields, so it stamps a bytearray copy.
"""

from __future__ import annotations

import struct

from log_engine.errors import (
    InvalidRecordError,
    MessageTooLargeError,
    UnexpectedAppendOffsetError,
)
from log_engine.records import BatchHeader, stamp_log_append_time, validate_batch
from log_engine.storage.config import LogConfig
from log_engine.storage.types import BatchInfo

_STAMP = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_LOG_OVERHEAD = 12
_MAX_IOVECS = 1000

Buffer = bytes | bytearray | memoryview
Headers = list[tuple[int, BatchHeader]]


def validate_append(view: memoryview, config: LogConfig, *, dense: bool) -> Headers:
    """``(position, header)`` of every batch, after checking each one.

    ``dense`` (batches from producers): ``lastOffsetDelta + 1 == recordsCount``.
    Raises CorruptMessageError subclasses, MessageTooLargeError or InvalidRecordError.
    """
    if len(view) > config.segment_bytes:
        raise MessageTooLargeError(
            f"append of {len(view)} bytes is larger than segment.bytes={config.segment_bytes}"
        )
    headers = []
    pos = 0
    while pos < len(view):
        header = validate_batch(view, pos)
        if header.size > config.max_message_bytes:
            raise MessageTooLargeError(
                f"batch of {header.size} bytes exceeds max.message.bytes={config.max_message_bytes}"
            )
        if header.records_count == 0:
            raise InvalidRecordError("a record batch must hold at least one record")
        if dense and header.last_offset_delta + 1 != header.records_count:
            raise InvalidRecordError(
                f"batch has {header.records_count} records but lastOffsetDelta "
                f"{header.last_offset_delta}"
            )
        headers.append((pos, header))
        pos += header.size
    return headers


def assign_offsets(
    view: memoryview, headers: Headers, next_offset: int, epoch: int, append_time_ms: int
) -> tuple[list[BatchInfo], list[Buffer]]:
    """Offsets from ``next_offset`` on; the stamped bytes as buffers to write in order.

    ``append_time_ms`` >= 0 stamps LogAppendTime (and recomputes each CRC).
    """
    infos: list[BatchInfo] = []
    offset = next_offset
    for pos, header in headers:
        max_timestamp = append_time_ms if append_time_ms >= 0 else header.max_timestamp
        last = offset + header.last_offset_delta
        infos.append(BatchInfo(pos, header.size, offset, last, max_timestamp))
        offset = last + 1
    if append_time_ms < 0 and len(headers) * 2 <= _MAX_IOVECS:
        parts: list[Buffer] = []
        for info, (pos, header) in zip(infos, headers, strict=True):
            parts.append(_STAMP.pack(info.base_offset, header.batch_length, epoch))
            parts.append(view[pos + _STAMP.size : pos + header.size])
        return infos, parts
    buf = bytearray(view)
    for info in infos:
        _STAMP.pack_into(buf, info.position, info.base_offset, info.size - _LOG_OVERHEAD, epoch)
        if append_time_ms >= 0:
            stamp_log_append_time(buf, info.position, append_time_ms)
    return infos, [buf]


def replica_offsets(headers: Headers, next_offset: int, name: str) -> list[BatchInfo]:
    """A follower's batches as they are: offsets must start >= ``next_offset`` and increase."""
    if headers[0][1].base_offset < next_offset:
        raise UnexpectedAppendOffsetError(
            f"{name}: replica batch at offset {headers[0][1].base_offset} "
            f"is below the log end offset {next_offset}"
        )
    infos = []
    expected = next_offset
    for pos, header in headers:
        if header.base_offset < expected:
            raise InvalidRecordError(
                f"{name}: batch offsets go backwards: {header.base_offset} after {expected - 1}"
            )
        infos.append(
            BatchInfo(
                pos, header.size, header.base_offset, header.last_offset, header.max_timestamp
            )
        )
        expected = header.next_offset
    return infos
