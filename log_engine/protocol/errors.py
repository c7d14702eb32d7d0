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
        ├── UnknownTopicIdError            100  retriable
        ├── InconsistentTopicIdError       103  retriable
        └── UnrecognizedKafkaError              any other code (error_for_code makes one
                                                subclass per unknown number, cached)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from log_engine.invariants import check

if TYPE_CHECKING:
    from log_engine.protocol.headers import RequestHeader


class ProtocolDecodeError(ValueError):
    """Bytes that do not match the schema being read: truncated, negative lengths,
    impossible array counts, invalid UTF-8, trailing bytes.

    Internal to the codec: the public entry points translate it, so the broker
    sees :class:`InvalidRequestError` and the client :class:`CorruptResponseError`.
    """


_BY_CODE: dict[int, type[KafkaError]] = {}


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

    def __init_subclass__(
        cls, *, errno: int | None = None, message: str = "", retriable: bool = False
    ) -> None:
        """``class X(KafkaError, errno=3, message="...", retriable=True)`` registers code 3."""
        super().__init_subclass__()
        if errno is None:
            return  # an abstract grouping, or a refinement of its parent's code
        check(errno not in _BY_CODE, f"error code {errno} registered twice")
        cls.errno, cls.message, cls.retriable = errno, message, retriable
        _BY_CODE[errno] = cls

    def __str__(self) -> str:
        detail = super().__str__()
        text = f"[Error {self.errno}] {self.message}"
        return f"{text}: {detail}" if detail else text


class UnknownServerError(KafkaError, errno=-1, message="UNKNOWN_SERVER_ERROR"):
    """The server hit an unexpected error while handling the request."""


class OffsetOutOfRangeError(KafkaError, errno=1, message="OFFSET_OUT_OF_RANGE"):
    """The requested offset is outside the partition's log."""


class CorruptMessageError(KafkaError, errno=2, message="CORRUPT_MESSAGE", retriable=True):
    """A record batch failed its CRC or is otherwise malformed."""


class UnknownTopicOrPartitionError(
    KafkaError, errno=3, message="UNKNOWN_TOPIC_OR_PARTITION", retriable=True
):
    """This broker does not host the topic-partition (metadata may be stale)."""


class InvalidFetchSizeError(KafkaError, errno=4, message="INVALID_FETCH_SIZE"):
    """The requested fetch size is invalid."""


class LeaderNotAvailableError(KafkaError, errno=5, message="LEADER_NOT_AVAILABLE", retriable=True):
    """The partition has no leader right now (an election is in progress)."""


class NotLeaderOrFollowerError(
    KafkaError, errno=6, message="NOT_LEADER_OR_FOLLOWER", retriable=True
):
    """This broker is not the leader (or a follower, for follower fetches)."""


class RequestTimedOutError(KafkaError, errno=7, message="REQUEST_TIMED_OUT", retriable=True):
    """The request did not complete within its timeout."""


class BrokerNotAvailableError(KafkaError, errno=8, message="BROKER_NOT_AVAILABLE"):
    """The broker is not available."""


class ReplicaNotAvailableError(
    KafkaError, errno=9, message="REPLICA_NOT_AVAILABLE", retriable=True
):
    """A replica the request expects is not available."""


class MessageTooLargeError(KafkaError, errno=10, message="MESSAGE_TOO_LARGE"):
    """A record batch is larger than the topic or broker allows."""


class OffsetMetadataTooLargeError(KafkaError, errno=12, message="OFFSET_METADATA_TOO_LARGE"):
    """The metadata string of an offset commit is too long."""


class NetworkExceptionError(KafkaError, errno=13, message="NETWORK_EXCEPTION", retriable=True):
    """The connection broke before a response arrived."""


class CorruptResponseError(NetworkExceptionError):
    """A response that does not parse at the version requested (client side).

    The stream's framing can no longer be trusted, so the caller drops the
    connection and retries, as it would after a network error.
    """


class CoordinatorLoadInProgressError(
    KafkaError, errno=14, message="COORDINATOR_LOAD_IN_PROGRESS", retriable=True
):
    """The coordinator is still loading the group's state."""


class CoordinatorNotAvailableError(
    KafkaError, errno=15, message="COORDINATOR_NOT_AVAILABLE", retriable=True
):
    """The coordinator is not available."""


class NotCoordinatorError(KafkaError, errno=16, message="NOT_COORDINATOR", retriable=True):
    """This broker is not the coordinator for the group or transaction."""


class InvalidTopicError(KafkaError, errno=17, message="INVALID_TOPIC_EXCEPTION"):
    """The topic name is invalid, or the topic is internal and not writable."""


class RecordListTooLargeError(KafkaError, errno=18, message="RECORD_LIST_TOO_LARGE"):
    """A produce request's batch list is larger than the segment size."""


class NotEnoughReplicasError(KafkaError, errno=19, message="NOT_ENOUGH_REPLICAS", retriable=True):
    """Fewer in-sync replicas than min.insync.replicas: the write was refused."""


class NotEnoughReplicasAfterAppendError(
    KafkaError, errno=20, message="NOT_ENOUGH_REPLICAS_AFTER_APPEND", retriable=True
):
    """Appended to the leader, but the ISR shrank below min.insync.replicas."""


class InvalidRequiredAcksError(KafkaError, errno=21, message="INVALID_REQUIRED_ACKS"):
    """acks is not one of -1, 0 or 1."""


class IllegalGenerationError(KafkaError, errno=22, message="ILLEGAL_GENERATION"):
    """The member's generation id is not the group's current one."""


class InconsistentGroupProtocolError(KafkaError, errno=23, message="INCONSISTENT_GROUP_PROTOCOL"):
    """The member's protocols do not overlap with the group's."""


class InvalidGroupIdError(KafkaError, errno=24, message="INVALID_GROUP_ID"):
    """The group id is empty or otherwise invalid."""


class UnknownMemberIdError(KafkaError, errno=25, message="UNKNOWN_MEMBER_ID"):
    """The coordinator does not know this member id."""


class InvalidSessionTimeoutError(KafkaError, errno=26, message="INVALID_SESSION_TIMEOUT"):
    """The session timeout is outside the broker's allowed range."""


class RebalanceInProgressError(KafkaError, errno=27, message="REBALANCE_IN_PROGRESS"):
    """The group is rebalancing; the member must rejoin."""


class InvalidCommitOffsetSizeError(KafkaError, errno=28, message="INVALID_COMMIT_OFFSET_SIZE"):
    """The committed offset's metadata is too large."""


class AuthorizationError(KafkaError):
    """Base of the ``*_AUTHORIZATION_FAILED`` codes (not itself a code)."""


class TopicAuthorizationFailedError(
    AuthorizationError, errno=29, message="TOPIC_AUTHORIZATION_FAILED"
):
    """Not authorized to access the topic."""


class GroupAuthorizationFailedError(
    AuthorizationError, errno=30, message="GROUP_AUTHORIZATION_FAILED"
):
    """Not authorized to access the group."""


class ClusterAuthorizationFailedError(
    AuthorizationError, errno=31, message="CLUSTER_AUTHORIZATION_FAILED"
):
    """Not authorized for the cluster-level operation."""


class InvalidTimestampError(KafkaError, errno=32, message="INVALID_TIMESTAMP"):
    """A record timestamp is outside the broker's accepted window."""


class UnsupportedSaslMechanismError(KafkaError, errno=33, message="UNSUPPORTED_SASL_MECHANISM"):
    """The broker does not support the requested SASL mechanism."""


class IllegalSaslStateError(KafkaError, errno=34, message="ILLEGAL_SASL_STATE"):
    """A SASL request arrived in the wrong state of the handshake."""


class UnsupportedVersionError(KafkaError, errno=35, message="UNSUPPORTED_VERSION"):
    """The api key is known but the version is outside ``SUPPORTED_VERSIONS``.

    ``header`` is the parsed request header, so the broker can answer (the
    KIP-511 ApiVersions fallback) or log before closing the connection.
    """

    def __init__(self, detail: str = "", *, header: RequestHeader | None = None) -> None:
        super().__init__(detail)
        self.header = header


class TopicAlreadyExistsError(KafkaError, errno=36, message="TOPIC_ALREADY_EXISTS"):
    """A topic with this name already exists."""


class InvalidPartitionsError(KafkaError, errno=37, message="INVALID_PARTITIONS"):
    """The partition count is invalid."""


class InvalidReplicationFactorError(KafkaError, errno=38, message="INVALID_REPLICATION_FACTOR"):
    """The replication factor is invalid (e.g. more than the live brokers)."""


class InvalidReplicaAssignmentError(KafkaError, errno=39, message="INVALID_REPLICA_ASSIGNMENT"):
    """The manual replica assignment is invalid."""


class InvalidConfigError(KafkaError, errno=40, message="INVALID_CONFIG"):
    """A configuration key or value is invalid."""


class NotControllerError(KafkaError, errno=41, message="NOT_CONTROLLER", retriable=True):
    """This broker is not the active controller."""


class InvalidRequestError(KafkaError, errno=42, message="INVALID_REQUEST"):
    """A request that does not parse, or that breaks the protocol's rules.

    ``header`` is the parsed request header, or None when the frame is shorter
    than the 8 fixed header bytes. The broker logs and closes the connection.
    """

    def __init__(self, detail: str = "", *, header: RequestHeader | None = None) -> None:
        super().__init__(detail)
        self.header = header


class UnknownApiKeyError(InvalidRequestError):
    """The request's api key is not one this codec knows (see ``ApiKey``)."""


class UnsupportedForMessageFormatError(
    KafkaError, errno=43, message="UNSUPPORTED_FOR_MESSAGE_FORMAT"
):
    """The request needs a newer message format than the topic's."""


class PolicyViolationError(KafkaError, errno=44, message="POLICY_VIOLATION"):
    """The request violates a configured policy."""


class OutOfOrderSequenceNumberError(KafkaError, errno=45, message="OUT_OF_ORDER_SEQUENCE_NUMBER"):
    """The broker received an out-of-order sequence number from an idempotent producer."""


class DuplicateSequenceNumberError(KafkaError, errno=46, message="DUPLICATE_SEQUENCE_NUMBER"):
    """The broker already has a batch with this sequence number."""


class InvalidProducerEpochError(KafkaError, errno=47, message="INVALID_PRODUCER_EPOCH"):
    """The producer's epoch is older than the broker's: another instance took over."""


class InvalidTxnStateError(KafkaError, errno=48, message="INVALID_TXN_STATE"):
    """The operation is not valid in the transaction's current state."""


class InvalidProducerIdMappingError(KafkaError, errno=49, message="INVALID_PRODUCER_ID_MAPPING"):
    """The producer id does not match the transactional id."""


class InvalidTransactionTimeoutError(KafkaError, errno=50, message="INVALID_TRANSACTION_TIMEOUT"):
    """The transaction timeout exceeds the broker's maximum."""


class ConcurrentTransactionsError(
    KafkaError, errno=51, message="CONCURRENT_TRANSACTIONS", retriable=True
):
    """Another transaction for this producer is still completing."""


class TransactionalIdAuthorizationFailedError(
    AuthorizationError, errno=53, message="TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
):
    """Not authorized to use the transactional id."""


class KafkaStorageError(KafkaError, errno=56, message="KAFKA_STORAGE_ERROR", retriable=True):
    """The broker's log directory for the partition failed."""


class SaslAuthenticationFailedError(KafkaError, errno=58, message="SASL_AUTHENTICATION_FAILED"):
    """SASL authentication failed."""


class UnknownProducerIdError(KafkaError, errno=59, message="UNKNOWN_PRODUCER_ID"):
    """The broker has no state for this producer id (it may have expired)."""


class NonEmptyGroupError(KafkaError, errno=68, message="NON_EMPTY_GROUP"):
    """The group still has members."""


class GroupIdNotFoundError(KafkaError, errno=69, message="GROUP_ID_NOT_FOUND"):
    """The group does not exist."""


class FetchSessionIdNotFoundError(
    KafkaError, errno=70, message="FETCH_SESSION_ID_NOT_FOUND", retriable=True
):
    """The fetch session id is not known to the broker."""


class InvalidFetchSessionEpochError(
    KafkaError, errno=71, message="INVALID_FETCH_SESSION_EPOCH", retriable=True
):
    """The fetch session epoch is not the next one."""


class ListenerNotFoundError(KafkaError, errno=72, message="LISTENER_NOT_FOUND", retriable=True):
    """The leader has no endpoint for the listener the request arrived on."""


class TopicDeletionDisabledError(KafkaError, errno=73, message="TOPIC_DELETION_DISABLED"):
    """Topic deletion is disabled on this cluster."""


class FencedLeaderEpochError(KafkaError, errno=74, message="FENCED_LEADER_EPOCH", retriable=True):
    """The request's leader epoch is older than the broker's."""


class UnknownLeaderEpochError(KafkaError, errno=75, message="UNKNOWN_LEADER_EPOCH", retriable=True):
    """The request's leader epoch is newer than the broker's."""


class UnsupportedCompressionTypeError(KafkaError, errno=76, message="UNSUPPORTED_COMPRESSION_TYPE"):
    """The compression codec is not supported at this request version."""


class OffsetNotAvailableError(KafkaError, errno=78, message="OFFSET_NOT_AVAILABLE", retriable=True):
    """The leader's high watermark has not caught up with its start offset yet."""


class MemberIdRequiredError(KafkaError, errno=79, message="MEMBER_ID_REQUIRED"):
    """The member must rejoin with the member id the coordinator assigned."""


class GroupMaxSizeReachedError(KafkaError, errno=81, message="GROUP_MAX_SIZE_REACHED"):
    """The group is at its maximum size."""


class FencedInstanceIdError(KafkaError, errno=82, message="FENCED_INSTANCE_ID"):
    """Another member with the same group.instance.id took over."""


class InvalidRecordError(KafkaError, errno=87, message="INVALID_RECORD"):
    """A well-formed batch the broker refuses (e.g. a null key on a compacted topic)."""


class UnstableOffsetCommitError(
    KafkaError, errno=88, message="UNSTABLE_OFFSET_COMMIT", retriable=True
):
    """A transactional offset commit for the partition is pending."""


class ThrottlingQuotaExceededError(
    KafkaError, errno=89, message="THROTTLING_QUOTA_EXCEEDED", retriable=True
):
    """The request was refused because of a throttling quota."""


class ProducerFencedError(KafkaError, errno=90, message="PRODUCER_FENCED"):
    """A newer producer with the same transactional id exists."""


class UnknownTopicIdError(KafkaError, errno=100, message="UNKNOWN_TOPIC_ID", retriable=True):
    """This broker does not know the topic id (metadata may be stale)."""


class InconsistentTopicIdError(
    KafkaError, errno=103, message="INCONSISTENT_TOPIC_ID", retriable=True
):
    """The topic id does not match the topic's (it was deleted and re-created)."""


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
