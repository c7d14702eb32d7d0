"""How the client raises errors: the protocol's :class:`KafkaError` classes, by code.

A broker error code becomes an instance of ``error_for_code(code)`` with a
message naming what failed, so callers catch the same classes whether an error
came from the wire or from the client itself (a dropped connection is a
``NETWORK_EXCEPTION``, an expired request a ``REQUEST_TIMED_OUT``: both
retriable). Two conditions exist only in the client and get their own classes:

::

    KafkaError                     (log_engine.protocol.errors)
    ├── <one class per error code>
    ├── NoOffsetForPartitionError  auto.offset.reset=none and nothing committed
    └── ClientClosedError          the client was closed while the call waited
"""

from __future__ import annotations

from log_engine.protocol.errors import CorruptResponseError, KafkaError, error_for_code

# The error codes the client reacts to by name.
NONE = 0
OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
MESSAGE_TOO_LARGE = 10
NETWORK_EXCEPTION = 13
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
NOT_ENOUGH_REPLICAS = 19
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
UNSUPPORTED_VERSION = 35
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
INVALID_PRODUCER_EPOCH = 47
UNKNOWN_PRODUCER_ID = 59
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
MEMBER_ID_REQUIRED = 79
FENCED_INSTANCE_ID = 82

# Errors after which the metadata cache is stale (leadership moved, topic changed).
METADATA_ERRORS = frozenset(
    {
        UNKNOWN_TOPIC_OR_PARTITION,
        LEADER_NOT_AVAILABLE,
        NOT_LEADER_OR_FOLLOWER,
        FENCED_LEADER_EPOCH,
        UNKNOWN_LEADER_EPOCH,
    }
)
# Errors after which the group coordinator must be looked up again.
COORDINATOR_ERRORS = frozenset({COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})


class NoOffsetForPartitionError(KafkaError):
    """A partition has no committed offset and ``auto.offset.reset`` is ``none``."""

    message = "NO_OFFSET_FOR_PARTITION"


class ClientClosedError(KafkaError):
    """The client was closed while this call was waiting."""

    message = "CLIENT_CLOSED"


__all__ = [
    "ClientClosedError",
    "CorruptResponseError",
    "KafkaError",
    "NoOffsetForPartitionError",
    "error_for_code",
]


def kafka_error(code: int, message: str) -> KafkaError:
    """The protocol's exception for ``code``, carrying ``message``."""
    return error_for_code(code)(message)


def network_error(message: str) -> KafkaError:
    """A connection failure: retriable, like Kafka's NetworkException."""
    return kafka_error(NETWORK_EXCEPTION, message)


def timeout_error(message: str) -> KafkaError:
    """A deadline passed: retriable, like Kafka's TimeoutException."""
    return kafka_error(REQUEST_TIMED_OUT, message)


def is_retriable(exc: BaseException) -> bool:
    """Whether retrying the operation that raised ``exc`` may succeed."""
    return isinstance(exc, KafkaError) and bool(exc.retriable)


def check_error(code: int, context: str) -> None:
    """Raise the protocol's exception for a non-zero ``code``, naming ``context``."""
    if code:
        raise kafka_error(code, context)
