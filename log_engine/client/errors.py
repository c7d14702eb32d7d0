"""How the client raises errors: the classes of :mod:`log_engine.errors`, by code.

A broker error code becomes an instance of ``error_for_code(code)`` with a
message naming what failed, so callers catch the same classes whether an error
came from the wire or from the client itself (a dropped connection is a
``NETWORK_EXCEPTION``, an expired request a ``REQUEST_TIMED_OUT``: both
retriable). The conditions that exist only in the client
(:class:`NoOffsetForPartitionError`, :class:`ClientClosedError`,
:class:`PartialDeliveryError`) are drawn in that tree too. This module
re-exports what callers of the client catch: the worker and plugins reach the
log only through ``log_engine.client``.
"""

from __future__ import annotations

from log_engine.errors import (
    ClientClosedError,
    CorruptResponseError,
    ErrorCode,
    KafkaError,
    NoOffsetForPartitionError,
    PartialDeliveryError,
    error_for_code,
)

# Errors after which the metadata cache is stale (leadership moved, topic changed).
METADATA_ERRORS = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.INCONSISTENT_TOPIC_ID,
    }
)
# Errors after which the group coordinator must be looked up again.
COORDINATOR_ERRORS = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})


__all__ = [
    "ClientClosedError",
    "CorruptResponseError",
    "KafkaError",
    "NoOffsetForPartitionError",
    "PartialDeliveryError",
    "error_for_code",
]


def kafka_error(code: int, message: str) -> KafkaError:
    """The protocol's exception for ``code``, carrying ``message``."""
    return error_for_code(code)(message)


def network_error(message: str) -> KafkaError:
    """A connection failure: retriable, like Kafka's NetworkException."""
    return kafka_error(ErrorCode.NETWORK_EXCEPTION, message)


def timeout_error(message: str) -> KafkaError:
    """A deadline passed: retriable, like Kafka's TimeoutException."""
    return kafka_error(ErrorCode.REQUEST_TIMED_OUT, message)


def is_retriable(exc: BaseException) -> bool:
    """Whether retrying the operation that raised ``exc`` may succeed."""
    return isinstance(exc, KafkaError) and bool(exc.retriable)


def check_error(code: int, context: str) -> None:
    """Raise the protocol's exception for a non-zero ``code``, naming ``context``."""
    if code:
        raise kafka_error(code, context)
