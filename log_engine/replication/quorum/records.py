"""Raft entries on the wire as Kafka record batches, the way KRaft's metadata log does.

Each entry is one record (value = the entry's payload, no key) at its own offset;
consecutive entries of one epoch and kind travel in one batch whose
``partitionLeaderEpoch`` is that epoch. The core's control entries (a new leader's
leader-change entry) become control batches: one record whose key is Kafka's
control-record key (version 0, type 2 = LeaderChange) and whose value is the
entry's payload. Batches are built uncompressed and decoded with their CRC
checked: a corrupt batch from a peer raises ``CorruptMessageError`` and the response
is dropped (a lost message the core retries).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence

from log_engine.errors import CorruptMessageError
from log_engine.records.batch import Record, build_batch, decode_batch, iter_batches
from log_engine.replication.raft.types import Entry

LEADER_CHANGE_KEY = struct.pack(">hh", 0, 2)
"""Kafka's control record key for a LeaderChange record (version 0, type 2)."""


def encode_entries(entries: Sequence[Entry]) -> bytes:
    """``entries`` (contiguous, in offset order) as concatenated record batches."""
    return b"".join(
        build_batch(
            [
                Record(LEADER_CHANGE_KEY if run[0].control else None, e.payload, offset=e.offset)
                for e in run
            ],
            base_offset=run[0].offset,
            partition_leader_epoch=run[0].epoch,
            is_control=run[0].control,
            keep_offsets=True,
            now_ms=0,
        )
        for run in _runs(entries)
    )


def decode_entries(data: bytes | memoryview | None) -> tuple[Entry, ...]:
    """The entries in ``data`` (the records field of a Fetch response)."""
    if not data:
        return ()
    entries: list[Entry] = []
    for position, header in iter_batches(data):
        _, records = decode_batch(data, position)
        for record in records:
            if record.value is None:
                raise CorruptMessageError(f"metadata record at {record.offset} has no value")
            entries.append(
                Entry(record.offset, header.partition_leader_epoch, record.value, header.is_control)
            )
    return tuple(entries)


def _runs(entries: Iterable[Entry]) -> Iterator[list[Entry]]:
    run: list[Entry] = []
    for entry in entries:
        if run and (entry.epoch != run[0].epoch or entry.control != run[0].control):
            yield run
            run = []
        run.append(entry)
    if run:
        yield run
