"""Sluice's own errors: each refines the Kafka error class whose code it answers with.

Storage, the client and the Raft core raise these; a handler that catches
:class:`~log_engine.errors.KafkaError` answers with ``error.errno`` whichever it is.
"""

from __future__ import annotations

from log_engine.errors.base import KafkaError
from log_engine.errors.kafka import (
    CorruptMessageError,
    InvalidRecordError,
    KafkaStorageError,
    NotLeaderOrFollowerError,
)

# Record batches (log_engine.records, storage).


class InvalidMagicError(CorruptMessageError):
    """The batch's magic byte is not 2 (legacy message formats are not supported)."""


class CrcMismatchError(CorruptMessageError):
    """The CRC-32C stored in the batch does not match its contents."""


class TruncatedBatchError(CorruptMessageError):
    """The buffer ends before the batch its header describes."""


class UnexpectedAppendOffsetError(InvalidRecordError):
    """A replica's batch starts below the log end offset: the follower must truncate first."""


class MalformedRecordError(InvalidRecordError):
    """A batch whose CRC is valid but whose records are not well formed.

    ``record_index`` is the index in the batch of the first bad record (the
    record count when bytes remain after the last one): produce responses
    report it in ``record_errors`` as Kafka does.
    """

    def __init__(self, message: str, record_index: int) -> None:
        super().__init__(message)
        self.record_index = record_index


# Log directories (storage).


class LogDirLockedError(KafkaStorageError):
    """Another process holds the lock on a log directory."""


class LogDirOfflineError(KafkaStorageError):
    """A write to the log directory failed (full disk, I/O error): it takes no more writes.

    The failed append was rolled back; acknowledged data stays readable. The
    directory comes back when the broker restarts on it (recovery runs then).
    """


class CorruptIndexError(KafkaStorageError):
    """An offset or time index fails its sanity check; storage rebuilds it from the log."""


# The client (log_engine.client): conditions that exist only on its side.


class NoOffsetForPartitionError(KafkaError):
    """A partition has no committed offset and ``auto.offset.reset`` is ``none``."""

    message = "NO_OFFSET_FOR_PARTITION"


class ClientClosedError(KafkaError):
    """The client was closed while this call was waiting."""

    message = "CLIENT_CLOSED"


class PartialDeliveryError(KafkaError):
    """Some records of one ``send_many`` run were not delivered; the others landed.

    Happens when the producer split a batch the broker refused as too large and a
    record was too large on its own. ``failed`` maps the position of each record not
    delivered, within the run, to its error; every other record of the run landed.
    """

    message = "PARTIAL_DELIVERY"

    def __init__(self, failed: dict[int, BaseException], count: int) -> None:
        first = failed[min(failed)]
        super().__init__(f"{len(failed)} of {count} records not delivered, e.g.: {first}")
        self.failed = failed
        self.count = count


# The Raft core (log_engine.replication.raft).


class RaftError(KafkaError):
    """Base class of the Raft core's operating errors."""


class NotLeaderError(RaftError, NotLeaderOrFollowerError):
    """The node is not the leader of the current epoch (the caller should find the leader)."""


class InvalidSnapshotError(RaftError):
    """A snapshot was asked at an offset the core cannot cover (not committed, or truncated)."""


class CorruptRaftStateError(RaftError, KafkaStorageError):
    """A durable Raft file is unreadable or inconsistent beyond a torn tail."""


# Cluster metadata (log_engine.metadata): fatal for a node that meets them in committed
# entries, since every replica holds the same entries.


class MetadataError(KafkaError):
    """Base class of the metadata layer's errors (answered as UNKNOWN_SERVER_ERROR)."""


class MetadataRecordError(MetadataError):
    """Bytes that are not a metadata record: bad frame, unknown type or version, bad body."""


class MetadataReplayError(MetadataError):
    """A well-formed record the image cannot apply (e.g. a partition of an unknown topic)."""
