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
    ├── ClientClosedError          the client was closed while the call waited
    └── PartialDeliveryError       some records of one ``send_many`` run landed, others not
"""

from __future__ import annotations

from log_engine.protocol.error_codes import ErrorCode
from log_engine.protocol.errors import CorruptResponseError, KafkaError, error_for_code

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
