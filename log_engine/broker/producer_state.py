"""Idempotent-producer bookkeeping for one partition.

For each producer id the partition remembers its epoch and the metadata of the
last :data:`BATCHES_KEPT` batches it appended (first/last sequence and offsets),
as Kafka does. A produce batch is then:

- a *duplicate* when its sequence range equals one of the kept batches: the
  broker answers with the original offsets and appends nothing;
- *in order* when its first sequence follows the last appended sequence
  (wrapping at 2**31-1 to 0), or is 0 from a new epoch;
- *out of order* otherwise (error 45), or from an older epoch (error 47).

State is rebuilt on start-up from the batch headers of the log (no record
decoding), so duplicates are still caught after a broker restart.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from log_engine.records import BatchHeader

BATCHES_KEPT = 5
_SEQUENCE_MAX = 2**31 - 1


class SequenceCheck(Enum):
    """Outcome of :meth:`ProducerStateTable.check`."""

    APPEND = "append"
    DUPLICATE = "duplicate"
    OUT_OF_ORDER = "out_of_order"
    FENCED_EPOCH = "fenced_epoch"


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """What a kept batch needs to recognise a retry of it."""

    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    """One producer id's epoch and its last appended batches."""

    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_KEPT))

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else -1


class ProducerStateTable:
    """Sequence tracking for the idempotent producers writing to one partition."""

    def __init__(self) -> None:
        self._producers: dict[int, ProducerEntry] = {}

    def check(self, header: BatchHeader) -> tuple[SequenceCheck, BatchMetadata | None]:
        """Classify an incoming batch; a DUPLICATE comes with the original batch."""
        if header.producer_id < 0 or header.base_sequence < 0:
            return SequenceCheck.APPEND, None
        entry = self._producers.get(header.producer_id)
        if entry is None:
            ok = header.base_sequence == 0
            return (SequenceCheck.APPEND if ok else SequenceCheck.OUT_OF_ORDER), None
        if header.producer_epoch < entry.epoch:
            return SequenceCheck.FENCED_EPOCH, None
        if header.producer_epoch > entry.epoch:
            ok = header.base_sequence == 0
            return (SequenceCheck.APPEND if ok else SequenceCheck.OUT_OF_ORDER), None
        last_sequence = _last_sequence(header)
        for kept in entry.batches:
            if kept.first_sequence == header.base_sequence and kept.last_sequence == last_sequence:
                return SequenceCheck.DUPLICATE, kept
        expected = 0 if entry.last_sequence == _SEQUENCE_MAX else entry.last_sequence + 1
        if header.base_sequence != expected:
            return SequenceCheck.OUT_OF_ORDER, None
        return SequenceCheck.APPEND, None

    def record(self, header: BatchHeader, first_offset: int, timestamp: int) -> None:
        """Remember an appended batch (``header`` as sent; offsets as assigned)."""
        if header.producer_id < 0 or header.base_sequence < 0:
            return
        entry = self._producers.get(header.producer_id)
        if entry is None or header.producer_epoch > entry.epoch:
            entry = ProducerEntry(header.producer_epoch)
            self._producers[header.producer_id] = entry
        entry.batches.append(
            BatchMetadata(
                header.base_sequence,
                _last_sequence(header),
                first_offset,
                first_offset + header.last_offset_delta,
                timestamp,
            )
        )

    def __len__(self) -> int:
        return len(self._producers)


def _last_sequence(header: BatchHeader) -> int:
    return (header.base_sequence + header.last_offset_delta) % (_SEQUENCE_MAX + 1)
