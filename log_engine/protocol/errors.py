"""Kafka error codes as exception classes, and the codec's own decode errors.

A response carries an ``int16`` error code; :func:`error_for_code` turns it into
a class, so a client writes ``raise error_for_code(code)()`` and callers catch by
type or branch on ``retriable``. Each class carries ``errno`` (the wire code),
``retriable`` (whether the same request may succeed later without the caller
changing anything: metadata is stale, a leader moves, a coordinator loads) and
``message`` (Kafka's constant name). Code 0 (``NONE``) is not an error.

::

    Exception
    ├── ValueError
    │   ├── ProtocolDecodeError             bytes that do not match the schema (internal;
    │   │                                   decode_request maps it to InvalidRequestError,
    │   │                                   decode_response to CorruptResponseError)
    │   └── EncodeError                     a body that does not fit its schema (a bug in
    │                                       the caller that built it)
    └── KafkaError                          errno, retriable, message
        ├── UnknownServerError              -1
        ├── OffsetOutOfRangeError            1
        ├── CorruptMessageError              2  retriable
        ├── UnknownTopicOrPartitionError     3  retriable
        ├── InvalidFetchSizeError            4
        ├── LeaderNotAvailableError          5  retriable
        ├── NotLeaderOrFollowerError         6  retriable
        ├── RequestTimedOutError             7  retriable
        ├── BrokerNotAvailableError          8
        ├── ReplicaNotAvailableError         9  retriable
        ├── MessageTooLargeError            10
        ├── OffsetMetadataTooLargeError     12
        ├── NetworkExceptionError           13  retriable
        │   └── CorruptResponseError            a response that does not parse: drop the
        │                                       connection and retry (client side)
        ├── CoordinatorLoadInProgressError  14  retriable
        ├── CoordinatorNotAvailableError    15  retriable
        ├── NotCoordinatorError             16  retriable
        ├── InvalidTopicError               17
        ├── RecordListTooLargeError         18
        ├── NotEnoughReplicasError          19  retriable
        ├── NotEnoughReplicasAfterAppendError 20 retriable
        ├── InvalidRequiredAcksError        21
        ├── IllegalGenerationError          22
        ├── InconsistentGroupProtocolError  23
        ├── InvalidGroupIdError             24
        ├── UnknownMemberIdError            25
        ├── InvalidSessionTimeoutError      26
        ├── RebalanceInProgressError        27
        ├── InvalidCommitOffsetSizeError    28
        ├── AuthorizationError                  (abstract: any *_AUTHORIZATION_FAILED)
        │   ├── TopicAuthorizationFailedError   29
        │   ├── GroupAuthorizationFailedError   30
        │   ├── ClusterAuthorizationFailedError 31
        │   └── TransactionalIdAuthorizationFailedError 53
        ├── InvalidTimestampError           32
        ├── UnsupportedSaslMechanismError   33
        ├── IllegalSaslStateError           34
        ├── UnsupportedVersionError         35  .header: the request's header (decode_request)
        ├── TopicAlreadyExistsError         36
        ├── InvalidPartitionsError          37
        ├── InvalidReplicationFactorError   38
        ├── InvalidReplicaAssignmentError   39
        ├── InvalidConfigError              40
        ├── NotControllerError              41  retriable
        ├── InvalidRequestError             42  .header: None if not even 8 header bytes
        │   └── UnknownApiKeyError              api key outside ApiKey
        ├── UnsupportedForMessageFormatError 43
        ├── PolicyViolationError            44
        ├── OutOfOrderSequenceNumberError   45
        ├── DuplicateSequenceNumberError    46
        ├── InvalidProducerEpochError       47
        ├── InvalidTxnStateError            48
        ├── InvalidProducerIdMappingError   49
        ├── InvalidTransactionTimeoutError  50
        ├── ConcurrentTransactionsError     51  retriable
        ├── KafkaStorageError               56  retriable
        ├── SaslAuthenticationFailedError   58
        ├── UnknownProducerIdError          59
        ├── NonEmptyGroupError              68
        ├── GroupIdNotFoundError            69
        ├── FetchSessionIdNotFoundError     70  retriable
        ├── InvalidFetchSessionEpochError   71  retriable
        ├── ListenerNotFoundError           72  retriable
        ├── TopicDeletionDisabledError      73
        ├── FencedLeaderEpochError          74  retriable
        ├── UnknownLeaderEpochError         75  retriable
        ├── UnsupportedCompressionTypeError 76
        ├── OffsetNotAvailableError         78  retriable
        ├── MemberIdRequiredError           79
        ├── GroupMaxSizeReachedError        81
        ├── FencedInstanceIdError           82
        ├── InvalidRecordError              87
        ├── UnstableOffsetCommitError       88  retriable
        ├── ThrottlingQuotaExceededError    89  retriable
        ├── ProducerFencedError             90
        └── UnrecognizedKafkaError              any other code (error_for_code makes one
                                                subclass per unknown number, cached)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, TypeVar

from log_engine.invariants import check

if TYPE_CHECKING:
    from log_engine.protocol.headers import RequestHeader


class ProtocolDecodeError(ValueError):
    """Bytes that do not match the schema being read: truncated, negative lengths,
    impossible array counts, invalid UTF-8, trailing bytes.

    Internal to the codec: the public entry points translate it, so the broker
    sees :class:`InvalidRequestError` and the client :class:`CorruptResponseError`.
    """


class EncodeError(ValueError):
    """A body that does not fit its schema: a wrong type, an out-of-range number,
    None for a field that is not nullable in that version, an over-long string.

    A programmer error in whoever built the body; the message names the field
    (``ProduceResponse.responses.partition_responses.error_code: ...``).
    """


class KafkaError(Exception):
    """Base of every Kafka error code; subclasses set the class attributes.

    ``str(error)`` reads ``[Error 3] UNKNOWN_TOPIC_OR_PARTITION: <detail>``.
    """

    errno: ClassVar[int] = -1
    retriable: ClassVar[bool] = False
    message: ClassVar[str] = "UNKNOWN_SERVER_ERROR"

    def __str__(self) -> str:
        detail = super().__str__()
        text = f"[Error {self.errno}] {self.message}"
        return f"{text}: {detail}" if detail else text


_BY_CODE: dict[int, type[KafkaError]] = {}


_E = TypeVar("_E", bound=type[KafkaError])


def _code(errno: int, message: str, *, retriable: bool = False) -> Callable[[_E], _E]:
    """Class decorator: set the code attributes and register the class."""

    def register(cls: _E) -> _E:
        check(errno not in _BY_CODE, f"error code {errno} registered twice")
        cls.errno, cls.message, cls.retriable = errno, message, retriable
        _BY_CODE[errno] = cls
        return cls

    return register


@_code(-1, "UNKNOWN_SERVER_ERROR")
class UnknownServerError(KafkaError):
    """The server hit an unexpected error while handling the request."""


@_code(1, "OFFSET_OUT_OF_RANGE")
class OffsetOutOfRangeError(KafkaError):
    """The requested offset is outside the partition's log."""


@_code(2, "CORRUPT_MESSAGE", retriable=True)
class CorruptMessageError(KafkaError):
    """A record batch failed its CRC or is otherwise malformed."""


@_code(3, "UNKNOWN_TOPIC_OR_PARTITION", retriable=True)
class UnknownTopicOrPartitionError(KafkaError):
    """This broker does not host the topic-partition (metadata may be stale)."""


@_code(4, "INVALID_FETCH_SIZE")
class InvalidFetchSizeError(KafkaError):
    """The requested fetch size is invalid."""


@_code(5, "LEADER_NOT_AVAILABLE", retriable=True)
class LeaderNotAvailableError(KafkaError):
    """The partition has no leader right now (an election is in progress)."""


@_code(6, "NOT_LEADER_OR_FOLLOWER", retriable=True)
class NotLeaderOrFollowerError(KafkaError):
    """This broker is not the leader (or a follower, for follower fetches)."""


@_code(7, "REQUEST_TIMED_OUT", retriable=True)
class RequestTimedOutError(KafkaError):
    """The request did not complete within its timeout."""


@_code(8, "BROKER_NOT_AVAILABLE")
class BrokerNotAvailableError(KafkaError):
    """The broker is not available."""


@_code(9, "REPLICA_NOT_AVAILABLE", retriable=True)
class ReplicaNotAvailableError(KafkaError):
    """A replica the request expects is not available."""


@_code(10, "MESSAGE_TOO_LARGE")
class MessageTooLargeError(KafkaError):
    """A record batch is larger than the topic or broker allows."""


@_code(12, "OFFSET_METADATA_TOO_LARGE")
class OffsetMetadataTooLargeError(KafkaError):
    """The metadata string of an offset commit is too long."""


@_code(13, "NETWORK_EXCEPTION", retriable=True)
class NetworkExceptionError(KafkaError):
    """The connection broke before a response arrived."""


class CorruptResponseError(NetworkExceptionError):
    """A response that does not parse at the version requested (client side).

    The stream's framing can no longer be trusted, so the caller drops the
    connection and retries, as it would after a network error.
    """


@_code(14, "COORDINATOR_LOAD_IN_PROGRESS", retriable=True)
class CoordinatorLoadInProgressError(KafkaError):
    """The coordinator is still loading the group's state."""


@_code(15, "COORDINATOR_NOT_AVAILABLE", retriable=True)
class CoordinatorNotAvailableError(KafkaError):
    """The coordinator is not available."""


@_code(16, "NOT_COORDINATOR", retriable=True)
class NotCoordinatorError(KafkaError):
    """This broker is not the coordinator for the group or transaction."""


@_code(17, "INVALID_TOPIC_EXCEPTION")
class InvalidTopicError(KafkaError):
    """The topic name is invalid, or the topic is internal and not writable."""


@_code(18, "RECORD_LIST_TOO_LARGE")
class RecordListTooLargeError(KafkaError):
    """A produce request's batch list is larger than the segment size."""


@_code(19, "NOT_ENOUGH_REPLICAS", retriable=True)
class NotEnoughReplicasError(KafkaError):
    """Fewer in-sync replicas than min.insync.replicas: the write was refused."""


@_code(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", retriable=True)
class NotEnoughReplicasAfterAppendError(KafkaError):
    """Appended to the leader, but the ISR shrank below min.insync.replicas."""


@_code(21, "INVALID_REQUIRED_ACKS")
class InvalidRequiredAcksError(KafkaError):
    """acks is not one of -1, 0 or 1."""


@_code(22, "ILLEGAL_GENERATION")
class IllegalGenerationError(KafkaError):
    """The member's generation id is not the group's current one."""


@_code(23, "INCONSISTENT_GROUP_PROTOCOL")
class InconsistentGroupProtocolError(KafkaError):
    """The member's protocols do not overlap with the group's."""


@_code(24, "INVALID_GROUP_ID")
class InvalidGroupIdError(KafkaError):
    """The group id is empty or otherwise invalid."""


@_code(25, "UNKNOWN_MEMBER_ID")
class UnknownMemberIdError(KafkaError):
    """The coordinator does not know this member id."""


@_code(26, "INVALID_SESSION_TIMEOUT")
class InvalidSessionTimeoutError(KafkaError):
    """The session timeout is outside the broker's allowed range."""


@_code(27, "REBALANCE_IN_PROGRESS")
class RebalanceInProgressError(KafkaError):
    """The group is rebalancing; the member must rejoin."""


@_code(28, "INVALID_COMMIT_OFFSET_SIZE")
class InvalidCommitOffsetSizeError(KafkaError):
    """The committed offset's metadata is too large."""


class AuthorizationError(KafkaError):
    """Base of the ``*_AUTHORIZATION_FAILED`` codes (not itself a code)."""


@_code(29, "TOPIC_AUTHORIZATION_FAILED")
class TopicAuthorizationFailedError(AuthorizationError):
    """Not authorized to access the topic."""


@_code(30, "GROUP_AUTHORIZATION_FAILED")
class GroupAuthorizationFailedError(AuthorizationError):
    """Not authorized to access the group."""


@_code(31, "CLUSTER_AUTHORIZATION_FAILED")
class ClusterAuthorizationFailedError(AuthorizationError):
    """Not authorized for the cluster-level operation."""


@_code(32, "INVALID_TIMESTAMP")
class InvalidTimestampError(KafkaError):
    """A record timestamp is outside the broker's accepted window."""


@_code(33, "UNSUPPORTED_SASL_MECHANISM")
class UnsupportedSaslMechanismError(KafkaError):
    """The broker does not support the requested SASL mechanism."""


@_code(34, "ILLEGAL_SASL_STATE")
class IllegalSaslStateError(KafkaError):
    """A SASL request arrived in the wrong state of the handshake."""


@_code(35, "UNSUPPORTED_VERSION")
class UnsupportedVersionError(KafkaError):
    """The api key is known but the version is outside ``SUPPORTED_VERSIONS``.

    ``header`` is the parsed request header, so the broker can answer (the
    KIP-511 ApiVersions fallback) or log before closing the connection.
    """

    def __init__(self, detail: str = "", *, header: RequestHeader | None = None) -> None:
        super().__init__(detail)
        self.header = header


@_code(36, "TOPIC_ALREADY_EXISTS")
class TopicAlreadyExistsError(KafkaError):
    """A topic with this name already exists."""


@_code(37, "INVALID_PARTITIONS")
class InvalidPartitionsError(KafkaError):
    """The partition count is invalid."""


@_code(38, "INVALID_REPLICATION_FACTOR")
class InvalidReplicationFactorError(KafkaError):
    """The replication factor is invalid (e.g. more than the live brokers)."""


@_code(39, "INVALID_REPLICA_ASSIGNMENT")
class InvalidReplicaAssignmentError(KafkaError):
    """The manual replica assignment is invalid."""


@_code(40, "INVALID_CONFIG")
class InvalidConfigError(KafkaError):
    """A configuration key or value is invalid."""


@_code(41, "NOT_CONTROLLER", retriable=True)
class NotControllerError(KafkaError):
    """This broker is not the active controller."""


@_code(42, "INVALID_REQUEST")
class InvalidRequestError(KafkaError):
    """A request that does not parse, or that breaks the protocol's rules.

    ``header`` is the parsed request header, or None when the frame is shorter
    than the 8 fixed header bytes. The broker logs and closes the connection.
    """

    def __init__(self, detail: str = "", *, header: RequestHeader | None = None) -> None:
        super().__init__(detail)
        self.header = header


class UnknownApiKeyError(InvalidRequestError):
    """The request's api key is not one this codec knows (see ``ApiKey``)."""


@_code(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT")
class UnsupportedForMessageFormatError(KafkaError):
    """The request needs a newer message format than the topic's."""


@_code(44, "POLICY_VIOLATION")
class PolicyViolationError(KafkaError):
    """The request violates a configured policy."""


@_code(45, "OUT_OF_ORDER_SEQUENCE_NUMBER")
class OutOfOrderSequenceNumberError(KafkaError):
    """The broker received an out-of-order sequence number from an idempotent producer."""


@_code(46, "DUPLICATE_SEQUENCE_NUMBER")
class DuplicateSequenceNumberError(KafkaError):
    """The broker already has a batch with this sequence number."""


@_code(47, "INVALID_PRODUCER_EPOCH")
class InvalidProducerEpochError(KafkaError):
    """The producer's epoch is older than the broker's: another instance took over."""


@_code(48, "INVALID_TXN_STATE")
class InvalidTxnStateError(KafkaError):
    """The operation is not valid in the transaction's current state."""


@_code(49, "INVALID_PRODUCER_ID_MAPPING")
class InvalidProducerIdMappingError(KafkaError):
    """The producer id does not match the transactional id."""


@_code(50, "INVALID_TRANSACTION_TIMEOUT")
class InvalidTransactionTimeoutError(KafkaError):
    """The transaction timeout exceeds the broker's maximum."""


@_code(51, "CONCURRENT_TRANSACTIONS", retriable=True)
class ConcurrentTransactionsError(KafkaError):
    """Another transaction for this producer is still completing."""


@_code(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
class TransactionalIdAuthorizationFailedError(AuthorizationError):
    """Not authorized to use the transactional id."""


@_code(56, "KAFKA_STORAGE_ERROR", retriable=True)
class KafkaStorageError(KafkaError):
    """The broker's log directory for the partition failed."""


@_code(58, "SASL_AUTHENTICATION_FAILED")
class SaslAuthenticationFailedError(KafkaError):
    """SASL authentication failed."""


@_code(59, "UNKNOWN_PRODUCER_ID")
class UnknownProducerIdError(KafkaError):
    """The broker has no state for this producer id (it may have expired)."""


@_code(68, "NON_EMPTY_GROUP")
class NonEmptyGroupError(KafkaError):
    """The group still has members."""


@_code(69, "GROUP_ID_NOT_FOUND")
class GroupIdNotFoundError(KafkaError):
    """The group does not exist."""


@_code(70, "FETCH_SESSION_ID_NOT_FOUND", retriable=True)
class FetchSessionIdNotFoundError(KafkaError):
    """The fetch session id is not known to the broker."""


@_code(71, "INVALID_FETCH_SESSION_EPOCH", retriable=True)
class InvalidFetchSessionEpochError(KafkaError):
    """The fetch session epoch is not the next one."""


@_code(72, "LISTENER_NOT_FOUND", retriable=True)
class ListenerNotFoundError(KafkaError):
    """The leader has no endpoint for the listener the request arrived on."""


@_code(73, "TOPIC_DELETION_DISABLED")
class TopicDeletionDisabledError(KafkaError):
    """Topic deletion is disabled on this cluster."""


@_code(74, "FENCED_LEADER_EPOCH", retriable=True)
class FencedLeaderEpochError(KafkaError):
    """The request's leader epoch is older than the broker's."""


@_code(75, "UNKNOWN_LEADER_EPOCH", retriable=True)
class UnknownLeaderEpochError(KafkaError):
    """The request's leader epoch is newer than the broker's."""


@_code(76, "UNSUPPORTED_COMPRESSION_TYPE")
class UnsupportedCompressionTypeError(KafkaError):
    """The compression codec is not supported at this request version."""


@_code(78, "OFFSET_NOT_AVAILABLE", retriable=True)
class OffsetNotAvailableError(KafkaError):
    """The leader's high watermark has not caught up with its start offset yet."""


@_code(79, "MEMBER_ID_REQUIRED")
class MemberIdRequiredError(KafkaError):
    """The member must rejoin with the member id the coordinator assigned."""


@_code(81, "GROUP_MAX_SIZE_REACHED")
class GroupMaxSizeReachedError(KafkaError):
    """The group is at its maximum size."""


@_code(82, "FENCED_INSTANCE_ID")
class FencedInstanceIdError(KafkaError):
    """Another member with the same group.instance.id took over."""


@_code(87, "INVALID_RECORD")
class InvalidRecordError(KafkaError):
    """A well-formed batch the broker refuses (e.g. a null key on a compacted topic)."""


@_code(88, "UNSTABLE_OFFSET_COMMIT", retriable=True)
class UnstableOffsetCommitError(KafkaError):
    """A transactional offset commit for the partition is pending."""


@_code(89, "THROTTLING_QUOTA_EXCEEDED", retriable=True)
class ThrottlingQuotaExceededError(KafkaError):
    """The request was refused because of a throttling quota."""


@_code(90, "PRODUCER_FENCED")
class ProducerFencedError(KafkaError):
    """A newer producer with the same transactional id exists."""


class UnrecognizedKafkaError(KafkaError):
    """Base of the classes :func:`error_for_code` makes for codes it has no class for."""


_UNRECOGNIZED: dict[int, type[KafkaError]] = {}


def error_for_code(code: int) -> type[KafkaError]:
    """The class for a wire error code; unknown codes get a cached generic subclass.

    Raises ``ValueError`` for 0 (``NONE``), which is not an error.
    """
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls
    if code == 0:
        raise ValueError("error code 0 (NONE) is not an error")
    cls = _UNRECOGNIZED.get(code)
    if cls is None:
        attrs = {"errno": code, "message": f"UNKNOWN_ERROR_CODE_{code}", "retriable": False}
        cls = type(f"UnrecognizedKafkaError{code}", (UnrecognizedKafkaError,), attrs)
        _UNRECOGNIZED[code] = cls
    return cls
