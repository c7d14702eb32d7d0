"""Splitting a producer batch the broker refused as too large: the pieces' bookkeeping.

:meth:`.producer_batch.ProducerBatch.split` re-encodes a refused batch's records
into smaller runs (:func:`cut_records`); each piece reports to the batch first
split, whose :class:`SplitState` gathers an offset, append time or error per
record. The last piece resolves the batch's futures; a sync future then reads
its record's metadata from a :class:`SplitOutcome` (the pieces landed at
separate offsets, so one base offset no longer describes the batch).
"""

from __future__ import annotations

from log_engine.client.delivery import BatchOutcome
from log_engine.client.types import RecordMetadata
from log_engine.records.varint import read_varint, read_varlong, write_varint


class SplitState:
    """What became of a split batch's records: offset, append time or error per record."""

    __slots__ = ("append_times", "errors", "offsets", "pending")

    def __init__(self, count: int, pending: int) -> None:
        self.offsets = [-1] * count
        self.append_times = [-1] * count
        self.errors: list[BaseException | None] = [None] * count
        self.pending = pending  # pieces not yet completed or failed


class SplitOutcome(BatchOutcome):
    """The outcome of a split batch's futures: its pieces landed at separate offsets."""

    __slots__ = ("append_times", "offsets")

    def __init__(self, outcome: BatchOutcome, state: SplitState) -> None:
        super().__init__(outcome.tp, outcome.timestamps)
        self.condition = outcome.condition  # the one the futures already wait on
        self.offsets = state.offsets
        self.append_times = state.append_times

    def metadata(self, index: int) -> RecordMetadata:
        stamp = self.append_times[index]
        stamp = stamp if stamp >= 0 else self.timestamps[index]
        return RecordMetadata(self.tp.topic, self.tp.partition, self.offsets[index], stamp)


def cut_records(data: bytes, count: int, room: int) -> list[tuple[int, int, bytearray]]:
    """Re-encode ``count`` records into runs of at most ``room`` bytes (one record at least).

    Returns ``(first index, count, records)`` per run; offset deltas restart at 0 in each
    run, timestamp deltas stay (a piece keeps its batch's base timestamp).
    """
    runs: list[tuple[int, int, bytearray]] = []
    records = bytearray()
    start = local = pos = 0
    for index in range(count):
        length, body = read_varint(data, pos)
        pos = body + length
        _, after_timestamp = read_varlong(data, body + 1)  # after the attributes byte
        _, after_offset = read_varint(data, after_timestamp)
        head, tail = data[body:after_timestamp], data[after_offset:pos]
        record = _record(head, local, tail)
        if local and len(records) + len(record) > room:
            runs.append((start, local, records))
            records, start, local = bytearray(), index, 0
            record = _record(head, 0, tail)
        records += record
        local += 1
    runs.append((start, local, records))
    return runs


def _record(head: bytes, offset_delta: int, tail: bytes) -> bytes:
    body = bytearray(head)
    write_varint(offset_delta, body)
    body += tail
    out = bytearray()
    write_varint(len(body), out)
    return bytes(out + body)
