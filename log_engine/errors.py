"""The log engine's exception tree.

Every operating error the engine raises is a :class:`LogEngineError`; each class
carries the Kafka error code a broker answers with, so handlers map errors in one
place (``error.error_code``) instead of catching each type.

::

    LogEngineError
    ├── CorruptRecordError            (2  CORRUPT_MESSAGE)   bytes that are not a valid batch
    │   ├── InvalidMagicError                                magic byte is not 2
    │   ├── CrcMismatchError                                 CRC-32C does not match
    │   └── TruncatedBatchError                              fewer bytes than batchLength says
    ├── InvalidRecordError            (87 INVALID_RECORD)    a valid batch the log refuses
    │   ├── UnexpectedAppendOffsetError                      replica batch below the log end offset
    │   └── MalformedRecordError                             CRC-valid batch, garbage records
    ├── RecordTooLargeError           (10 MESSAGE_TOO_LARGE)
    ├── OffsetOutOfRangeError         (1  OFFSET_OUT_OF_RANGE)
    ├── UnsupportedCompressionError   (76 UNSUPPORTED_COMPRESSION_TYPE)
    ├── InvalidConfigError            (40 INVALID_CONFIG)    also a ValueError
    ├── InvalidTopicError             (17 INVALID_TOPIC_EXCEPTION) illegal topic name or partition
    └── StorageError                  (56 KAFKA_STORAGE_ERROR) I/O or on-disk inconsistency
        ├── LogDirLockedError                                another process owns the directory
        ├── LogDirOfflineError                               a write failed; the dir takes no more
        └── CorruptIndexError                                an index file fails its sanity check
"""

from __future__ import annotations


class LogEngineError(Exception):
    """Base class of the engine's operating errors."""

    error_code: int = -1  # UNKNOWN_SERVER_ERROR


class CorruptRecordError(LogEngineError):
    """The bytes are not a well-formed record batch."""

    error_code = 2


class InvalidMagicError(CorruptRecordError):
    """The batch's magic byte is not 2 (legacy message formats are not supported)."""


class CrcMismatchError(CorruptRecordError):
    """The CRC-32C stored in the batch does not match its contents."""


class TruncatedBatchError(CorruptRecordError):
    """The buffer ends before the batch its header describes."""


class InvalidRecordError(LogEngineError):
    """A well-formed batch that the log must refuse (e.g. compacted topic, null key)."""

    error_code = 87


class RecordTooLargeError(LogEngineError):
    """A batch larger than ``max.message.bytes``."""

    error_code = 10


class OffsetOutOfRangeError(LogEngineError):
    """A read below the log start offset or above the log end offset."""

    error_code = 1


class UnsupportedCompressionError(LogEngineError):
    """A compression codec id outside 0-4."""

    error_code = 76


class UnexpectedAppendOffsetError(InvalidRecordError):
    """A replica's batch starts below the log end offset: the follower must truncate first."""


class InvalidConfigError(LogEngineError, ValueError):
    """A topic config key is unknown or its value is invalid (also a ``ValueError``)."""

    error_code = 40


class InvalidTopicError(LogEngineError):
    """A topic name or partition number that cannot name a partition directory."""

    error_code = 17


class StorageError(LogEngineError):
    """An I/O failure or an on-disk inconsistency that recovery could not repair."""

    error_code = 56


class LogDirLockedError(StorageError):
    """Another process holds the lock on a log directory."""


class LogDirOfflineError(StorageError):
    """A write to the log directory failed (full disk, I/O error): it takes no more writes.

    The failed append was rolled back; acknowledged data stays readable. The
    directory comes back when the broker restarts on it (recovery runs then).
    """


class CorruptIndexError(StorageError):
    """An offset or time index fails its sanity check; storage rebuilds it from the log."""


class MalformedRecordError(InvalidRecordError):
    """A batch whose CRC is valid but whose records are not well formed.

    ``record_index`` is the index in the batch of the first bad record (the
    record count when bytes remain after the last one): produce responses
    report it in ``record_errors`` as Kafka does.
    """

    def __init__(self, message: str, record_index: int) -> None:
        super().__init__(message)
        self.record_index = record_index
