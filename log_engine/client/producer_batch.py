"""One partition's batch of records, encoded as they arrive.

Records are written straight into the batch's ``bytearray`` in RecordBatch v2
record layout (the hot path: no per-record objects besides the caller's
future). When the sender takes the batch, :meth:`ProducerBatch.seal` compresses
the records and prepends the 61-byte header; the producer id, epoch and base
sequence are stamped once (idempotence) and kept for every retry, so a retried
batch is byte-for-byte the one first sent.

A sealed batch the broker refused as too large is cut by :meth:`ProducerBatch.split`
into smaller batches ("pieces", re-encoded with the same codec, in record order).
The batch keeps its futures and its ``buffer.memory`` reservation; each piece
reports to it when it completes or fails, and the last one resolves the futures,
each record with its own offset or error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from log_engine.client.batch_split import SplitOutcome, SplitState, cut_records
from log_engine.client.delivery import BatchOutcome, DeliveryFuture, SegmentFuture
from log_engine.client.errors import PartialDeliveryError
from log_engine.client.types import Header, RecordMetadata, TopicPartition
from log_engine.invariants import check
from log_engine.records import BATCH_HEADER_SIZE
from log_engine.records.batch import assemble_batch, read_header
from log_engine.records.compression import Compression, compress, decompress
from log_engine.records.varint import write_varint

# Upper bound of the bytes a record adds beyond key, value and headers.
RECORD_OVERHEAD_MAX = 5 + 1 + 10 + 5 + 5 + 5 + 5

_TABLE_SIZE = 1 << 14


def _zigzag_bytes(value: int) -> bytes:
    out = bytearray()
    write_varint(value, out)
    return bytes(out)


_ZIGZAG = [_zigzag_bytes(n) for n in range(_TABLE_SIZE)]
_NULL = b"\x01"  # zigzag -1
_ZERO = b"\x00"
_SEQUENCE_MASK = 2**31 - 1


def _varint(value: int) -> bytes:
    if 0 <= value < _TABLE_SIZE:
        return _ZIGZAG[value]
    return _zigzag_bytes(value)


def _encode_body(
    delta: int,
    count: int,
    key: bytes | None,
    value: bytes | None,
    header_block: bytes,
) -> bytes:
    """A record's bytes after its length prefix (attributes through headers).

    ``header_block`` is :func:`_encode_headers`' result: records that share one
    headers object (a source's constant headers) encode it once per run.
    """
    parts: list[bytes] = [_ZERO, _varint(delta), _varint(count)]
    if key is None:
        parts.append(_NULL)
    else:
        parts += (_varint(len(key)), key)
    if value is None:
        parts.append(_NULL)
    else:
        parts += (_varint(len(value)), value)
    parts.append(header_block)
    return b"".join(parts)


def _encode_headers(headers: Sequence[Header] | None) -> bytes:
    """The headers part of a record: their count, then each name and value."""
    if not headers:
        return _ZERO
    parts: list[bytes] = [_varint(len(headers))]
    for name, hvalue in headers:
        encoded = name.encode()
        parts += (_varint(len(encoded)), encoded)
        if hvalue is None:
            parts.append(_NULL)
        else:
            parts += (_varint(len(hvalue)), hvalue)
    return b"".join(parts)


def encoded_size(key: bytes | None, value: bytes | None, headers: Sequence[Header] | None) -> int:
    """An upper bound of the bytes a record takes in a batch (used before appending)."""
    size = RECORD_OVERHEAD_MAX + (len(key) if key else 0) + (len(value) if value else 0)
    if headers:
        for name, hvalue in headers:
            size += 10 + len(name) * 4 + (len(hvalue) if hvalue else 0)
    return size


class ProducerBatch:
    """Records for one partition, their futures, and the wire bytes once sealed.

    Appends happen under the accumulator's lock; once the sender drains the
    batch it is sealed and never changes again, except for its retry state.
    """

    __slots__ = (
        "_records",
        "attempts",
        "base_sequence",
        "base_timestamp",
        "closed",
        "count",
        "created_monotonic",
        "done",
        "futures",
        "in_flight",
        "limit_bytes",
        "max_timestamp",
        "outcome",
        "parent",
        "parent_first",
        "producer_epoch",
        "producer_id",
        "reserved_bytes",
        "retry_at_monotonic",
        "split_state",
        "timestamps",
        "tp",
        "wire",
    )

    def __init__(
        self, tp: TopicPartition, timestamp: int, limit_bytes: int, reserved_bytes: int
    ) -> None:
        self.tp = tp
        self.base_timestamp = timestamp
        self.max_timestamp = timestamp
        self.created_monotonic = time.monotonic()
        self._records = bytearray()
        self.count = 0
        self.futures: list[Any] = []
        self.timestamps: list[int] = []
        self.limit_bytes = limit_bytes
        self.reserved_bytes = reserved_bytes
        self.wire: bytes | None = None
        self.base_sequence = -1
        self.producer_id = -1
        self.producer_epoch = -1
        self.attempts = 0
        self.retry_at_monotonic = 0.0
        self.in_flight = False
        self.done = False
        self.closed = False  # taken out of the accumulator: no more appends
        self.outcome: BatchOutcome | None = None  # created with the first sync future
        self.parent: ProducerBatch | None = None  # a piece of a split batch: the batch
        self.parent_first = 0  # a piece: the index of its first record in the parent
        self.split_state: SplitState | None = None  # a split batch: its pieces' results

    @property
    def size_bytes(self) -> int:
        """Bytes of encoded records so far (before compression)."""
        return len(self._records)

    @property
    def sealed(self) -> bool:
        return self.wire is not None

    def has_room(self, size_hint: int) -> bool:
        """Whether a record of about ``size_hint`` bytes fits (an empty batch takes anything).

        The limit (``batch.size``) counts the whole batch, header included, as the Java
        client does, so a full batch never exceeds a broker's ``max.message.bytes`` of
        the same size.
        """
        return not self.closed and (
            self.count == 0
            or BATCH_HEADER_SIZE + len(self._records) + size_hint <= self.limit_bytes
        )

    def append(
        self,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header] | None,
        timestamp: int,
        future: Any,
    ) -> Any:
        """Encode one record at the end of the batch (the caller checked :meth:`has_room`).

        Returns ``future``, or a new :class:`DeliveryFuture` when ``future`` is None.
        """
        delta = timestamp - self.base_timestamp
        count = self.count
        if (
            key is None
            and not headers
            and value is not None
            and 0 <= delta < _TABLE_SIZE
            and (count < _TABLE_SIZE)
        ):
            # The common record (value only): one join, table lookups for the varints.
            body = b"".join(
                (_ZERO, _ZIGZAG[delta], _ZIGZAG[count], _NULL, _varint(len(value)), value, _ZERO)
            )
        else:
            body = _encode_body(delta, count, key, value, _encode_headers(headers))
        records = self._records
        records += _varint(len(body))
        records += body
        self.count += 1
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
        if future is None:
            if self.outcome is None:
                self.outcome = BatchOutcome(self.tp, self.timestamps)
            future = DeliveryFuture(self.outcome, count)
        self.futures.append(future)
        self.timestamps.append(timestamp)
        return future

    def append_run(
        self,
        keys: Sequence[bytes | None] | None,
        values: Sequence[bytes | None],
        headers: Sequence[Sequence[Header] | None] | None,
        timestamps: Sequence[int] | None,
        timestamp: int,
        start: int,
        stop: int,
    ) -> tuple[int, SegmentFuture | None]:
        """Encode records ``start``..``stop - 1`` while they fit; one future for all of them.

        ``keys``, ``headers`` and ``timestamps`` run parallel to ``values`` (None: no
        keys, no headers, every record at ``timestamp``). An empty batch takes at least
        one record, as :meth:`has_room` allows. Returns the index of the first record
        not appended (``stop`` when all fit) and the future of those appended (None if
        none was).
        """
        first = self.count
        count = first
        base = self.base_timestamp
        records = self._records
        room = self.limit_bytes - BATCH_HEADER_SIZE - len(records)
        table, varint, join = _ZIGZAG, _varint, b"".join
        max_timestamp = self.max_timestamp
        index = start
        last_headers: Sequence[Header] | None = None
        header_block = _ZERO
        if keys is None and headers is None and timestamps is None:
            index, count, room = self._append_values(values, timestamp, index, stop, count, room)
            if count > first and timestamp > max_timestamp:
                max_timestamp = timestamp
        while index < stop:
            value = values[index]
            key = None if keys is None else keys[index]
            record_headers = None if headers is None else headers[index]
            stamp = timestamp if timestamps is None else timestamps[index]
            delta = stamp - base
            if (
                key is None
                and not record_headers
                and value is not None
                and 0 <= delta < _TABLE_SIZE
                and count < _TABLE_SIZE
            ):
                # The common record (value only): one join, table lookups for the varints.
                value_size = len(value)
                size_prefix = varint(value_size)
                delta_bytes, count_bytes = table[delta], table[count]
                size = 3 + len(delta_bytes) + len(count_bytes) + len(size_prefix) + value_size
                length = table[size] if size < _TABLE_SIZE else varint(size)
                if count > 0 and len(length) + size > room:
                    break
                records += join(
                    (length, _ZERO, delta_bytes, count_bytes, _NULL, size_prefix, value, _ZERO)
                )
            else:
                if record_headers is not last_headers:  # the same object: the same bytes
                    last_headers = record_headers
                    header_block = _encode_headers(record_headers)
                body = _encode_body(delta, count, key, value, header_block)
                length = varint(len(body))
                size = len(body)
                if count > 0 and len(length) + size > room:
                    break
                records += length
                records += body
            room -= len(length) + size
            count += 1
            if stamp > max_timestamp:
                max_timestamp = stamp
            index += 1
        if count == first:
            return index, None
        self.count = count
        self.max_timestamp = max_timestamp
        if timestamps is None:
            self.timestamps.extend([timestamp] * (count - first))
        else:
            self.timestamps.extend(timestamps[start:index])
        if self.outcome is None:
            self.outcome = BatchOutcome(self.tp, self.timestamps)
        future = SegmentFuture(self.outcome, first, count)
        self.futures.append(future)
        return index, future

    def _append_values(
        self, values: Sequence[bytes | None], timestamp: int, index: int, stop: int,
        count: int, room: int,
    ) -> tuple[int, int, int]:
        """:meth:`append_run`'s loop for records with a value only, all at ``timestamp``.

        Stops at the first record it does not take (no room, a None value, a table
        bound); returns the index reached, the record count and the room left.
        """
        delta = timestamp - self.base_timestamp
        if not 0 <= delta < _TABLE_SIZE:
            return index, count, room
        table, join, records = _ZIGZAG, b"".join, self._records
        head = _ZERO + table[delta]
        fixed = 2 + len(head)  # attributes + delta, key -1, header count 0
        for value in values[index:stop]:
            if value is None or count >= _TABLE_SIZE:
                break
            value_size = len(value)
            size_prefix = table[value_size] if value_size < _TABLE_SIZE else _varint(value_size)
            count_bytes = table[count]
            size = fixed + len(count_bytes) + len(size_prefix) + value_size
            length = table[size] if size < _TABLE_SIZE else _varint(size)
            room -= len(length) + size
            if room < 0 and count > 0:
                room += len(length) + size
                break
            records += join((length, head, count_bytes, _NULL, size_prefix, value, _ZERO))
            count += 1
            index += 1
        return index, count, room

    def seal(
        self,
        compression: Compression,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
    ) -> None:
        """Compress the records and build the wire batch; no appends afterwards.

        Sealing again (after the producer id was reset) keeps the compressed
        records and only rewrites the idempotence fields and the CRC.
        """
        check(self.count > 0, "sealing an empty batch")
        if self.wire is None:
            payload = compress(compression, bytes(self._records))
            self._records = bytearray()
        else:
            payload = self.wire[BATCH_HEADER_SIZE:]
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.wire = assemble_batch(
            payload,
            attributes=int(compression),
            last_offset_delta=self.count - 1,
            base_timestamp=self.base_timestamp,
            max_timestamp=self.max_timestamp,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            records_count=self.count,
        )

    def complete(self, base_offset: int, log_append_time: int) -> None:
        """Resolve every record's future with its offset (``base_offset`` -1: unknown)."""
        if self.done:
            return
        self.done = True
        if self.parent is not None:
            self.parent._piece_done(self, base_offset, log_append_time, None)
            return
        if self.outcome is not None:  # futures of the sync producer
            self.outcome.base_offset = base_offset
            self.outcome.log_append_time = log_append_time
            DeliveryFuture.finish_all(self.outcome, self.futures, None)
            return
        topic, partition = self.tp
        for index, future in enumerate(self.futures):
            if not future.done():
                timestamp = log_append_time if log_append_time >= 0 else self.timestamps[index]
                offset = base_offset + index if base_offset >= 0 else -1
                future.set_result(RecordMetadata(topic, partition, offset, timestamp))

    def fail(self, exc: BaseException) -> None:
        """Fail every record's future with ``exc``."""
        if self.done:
            return
        self.done = True
        if self.parent is not None:
            self.parent._piece_done(self, -1, -1, exc)
            return
        if self.outcome is not None:
            DeliveryFuture.finish_all(self.outcome, self.futures, exc)
            return
        for future in self.futures:
            if not future.done():
                future.set_exception(exc)

    # -- splitting a batch the broker refused as too large -------------------------------

    def records_bytes(self) -> bytes:
        """The encoded records, uncompressed (also once sealed)."""
        if self.wire is None:
            return bytes(self._records)
        codec = read_header(self.wire).compression
        return decompress(codec, memoryview(self.wire)[BATCH_HEADER_SIZE:])

    def split(self, limit_bytes: int | None) -> list[ProducerBatch]:
        """Cut this sealed batch into sealed batches of at most ``limit_bytes``, in order.

        Sizes count the header and the uncompressed records; a piece holds at least one
        record. Without a limit, or when the limit would not cut the batch (compression
        made it larger than its records), the records are halved, so every split makes
        progress. Pieces keep the codec, the creation time (``delivery.timeout.ms``) and,
        with sequence numbers, the producer id and this batch's sequence range in turn:
        the broker refused the batch, so it still expects its first sequence. Results
        gather in the batch first split (the pieces' ``parent``); this batch is replaced.
        """
        check(self.wire is not None and self.count > 1, "splitting an unsealed 1-record batch")
        assert self.wire is not None
        codec = Compression(read_header(self.wire).compression)
        data = self.records_bytes()
        if limit_bytes is None or BATCH_HEADER_SIZE + len(data) <= limit_bytes:
            limit_bytes = BATCH_HEADER_SIZE + len(data) // 2
        root = self if self.parent is None else self.parent
        pieces = []
        for start, count, records in cut_records(data, self.count, limit_bytes - BATCH_HEADER_SIZE):
            piece = ProducerBatch(self.tp, self.base_timestamp, self.limit_bytes, 0)
            piece._records = records
            piece.count = count
            piece.parent = root
            piece.parent_first = self.parent_first + start
            piece.timestamps = root.timestamps[piece.parent_first : piece.parent_first + count]
            piece.max_timestamp = max(piece.timestamps)
            piece.created_monotonic = self.created_monotonic
            piece.attempts = self.attempts
            piece.closed = True
            sequence = -1
            if self.base_sequence >= 0:
                sequence = (self.base_sequence + start) & _SEQUENCE_MASK
            piece.seal(codec, self.producer_id, self.producer_epoch, sequence)
            pieces.append(piece)
        if root is self:
            self.split_state = SplitState(self.count, len(pieces))
        else:
            assert root.split_state is not None
            root.split_state.pending += len(pieces) - 1
            self.done = True  # its pieces report to the root instead
        self.wire = None
        return pieces

    def _piece_done(
        self, piece: ProducerBatch, base_offset: int, log_append_time: int,
        exc: BaseException | None,
    ) -> None:
        """Record a piece's result; the last one resolves this (split) batch's futures."""
        state = self.split_state
        assert state is not None
        first, count = piece.parent_first, piece.count
        if exc is not None:
            state.errors[first : first + count] = [exc] * count
        else:
            if base_offset >= 0:
                state.offsets[first : first + count] = range(base_offset, base_offset + count)
            state.append_times[first : first + count] = [log_append_time] * count
        state.pending -= 1
        if state.pending == 0:
            self._resolve_split(state)

    def _resolve_split(self, state: SplitState) -> None:
        self.done = True
        if self.outcome is None:  # one asyncio future per record
            topic, partition = self.tp
            for index, future in enumerate(self.futures):
                exc = state.errors[index]
                if future.done():
                    continue
                if exc is not None:
                    future.set_exception(exc)
                    continue
                stamp = state.append_times[index]
                stamp = stamp if stamp >= 0 else self.timestamps[index]
                future.set_result(RecordMetadata(topic, partition, state.offsets[index], stamp))
            return
        outcome = SplitOutcome(self.outcome, state)
        delivered: list[Any] = []
        failed: dict[int, tuple[BaseException, list[Any]]] = {}
        for future in self.futures:
            # A future reads its RecordMetadata from its outcome: give it per-record offsets.
            future._outcome = outcome
            start = future._index
            stop = start + getattr(future, "record_count", 1)  # a SegmentFuture's run
            run_errors = state.errors[start:stop]
            exc = next((e for e in run_errors if e is not None), None)
            if exc is None:
                delivered.append(future)
                continue
            if any(e is not exc for e in run_errors):  # some landed, or several errors
                exc = PartialDeliveryError(
                    {i: e for i, e in enumerate(run_errors) if e is not None}, stop - start
                )
            failed.setdefault(id(exc), (exc, []))[1].append(future)
        DeliveryFuture.finish_all(outcome, delivered, None)
        for exc, futures in failed.values():
            DeliveryFuture.finish_all(outcome, futures, exc)
