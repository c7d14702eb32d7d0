"""One exception class per Kafka error code (the tree is drawn in :mod:`log_engine.errors`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from log_engine.errors.base import KafkaError
from log_engine.errors.codes import ErrorCode

if TYPE_CHECKING:
    from log_engine.protocol.headers import RequestHeader


class UnknownServerError(KafkaError, code=ErrorCode.UNKNOWN_SERVER_ERROR):
    """The server hit an unexpected error while handling the request."""


class OffsetOutOfRangeError(KafkaError, code=ErrorCode.OFFSET_OUT_OF_RANGE):
    """The requested offset is outside the partition's log (below its start or above its end)."""


class CorruptMessageError(KafkaError, code=ErrorCode.CORRUPT_MESSAGE, retriable=True):
    """A record batch failed its CRC or is otherwise malformed."""


class UnknownTopicOrPartitionError(
    KafkaError, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, retriable=True
):
    """This broker does not host the topic-partition (metadata may be stale)."""


class InvalidFetchSizeError(KafkaError, code=ErrorCode.INVALID_FETCH_SIZE):
    """The requested fetch size is invalid."""


class LeaderNotAvailableError(KafkaError, code=ErrorCode.LEADER_NOT_AVAILABLE, retriable=True):
    """The partition has no leader right now (an election is in progress)."""


class NotLeaderOrFollowerError(
    KafkaError, code=ErrorCode.NOT_LEADER_OR_FOLLOWER, retriable=True
):
    """This broker is not the leader (or a follower, for follower fetches)."""


class RequestTimedOutError(KafkaError, code=ErrorCode.REQUEST_TIMED_OUT, retriable=True):
    """The request did not complete within its timeout."""


class BrokerNotAvailableError(KafkaError, code=ErrorCode.BROKER_NOT_AVAILABLE):
    """The broker is not available."""


class ReplicaNotAvailableError(
    KafkaError, code=ErrorCode.REPLICA_NOT_AVAILABLE, retriable=True
):
    """A replica the request expects is not available."""


class MessageTooLargeError(KafkaError, code=ErrorCode.MESSAGE_TOO_LARGE):
    """A record batch is larger than the topic or broker allows."""


class OffsetMetadataTooLargeError(KafkaError, code=ErrorCode.OFFSET_METADATA_TOO_LARGE):
    """The metadata string of an offset commit is too long."""


class NetworkExceptionError(KafkaError, code=ErrorCode.NETWORK_EXCEPTION, retriable=True):
    """The connection broke before a response arrived."""


class CorruptResponseError(NetworkExceptionError):
    """A response that does not parse at the version requested (client side).

    The stream's framing can no longer be trusted, so the caller drops the
    connection and retries, as it would after a network error.
    """


class CoordinatorLoadInProgressError(
    KafkaError, code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, retriable=True
):
    """The coordinator is still loading the group's state."""


class CoordinatorNotAvailableError(
    KafkaError, code=ErrorCode.COORDINATOR_NOT_AVAILABLE, retriable=True
):
    """The coordinator is not available."""


class NotCoordinatorError(KafkaError, code=ErrorCode.NOT_COORDINATOR, retriable=True):
    """This broker is not the coordinator for the group or transaction."""


class InvalidTopicError(KafkaError, code=ErrorCode.INVALID_TOPIC_EXCEPTION):
    """The topic name or partition number is invalid, or the topic is internal and not writable."""


class RecordListTooLargeError(KafkaError, code=ErrorCode.RECORD_LIST_TOO_LARGE):
    """A produce request's batch list is larger than the segment size."""


class NotEnoughReplicasError(KafkaError, code=ErrorCode.NOT_ENOUGH_REPLICAS, retriable=True):
    """Fewer in-sync replicas than min.insync.replicas: the write was refused."""


class NotEnoughReplicasAfterAppendError(
    KafkaError, code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, retriable=True
):
    """Appended to the leader, but the ISR shrank below min.insync.replicas."""


class InvalidRequiredAcksError(KafkaError, code=ErrorCode.INVALID_REQUIRED_ACKS):
    """acks is not one of -1, 0 or 1."""


class IllegalGenerationError(KafkaError, code=ErrorCode.ILLEGAL_GENERATION):
    """The member's generation id is not the group's current one."""


class InconsistentGroupProtocolError(KafkaError, code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL):
    """The member's protocols do not overlap with the group's."""


class InvalidGroupIdError(KafkaError, code=ErrorCode.INVALID_GROUP_ID):
    """The group id is empty or otherwise invalid."""


class UnknownMemberIdError(KafkaError, code=ErrorCode.UNKNOWN_MEMBER_ID):
    """The coordinator does not know this member id."""


class InvalidSessionTimeoutError(KafkaError, code=ErrorCode.INVALID_SESSION_TIMEOUT):
    """The session timeout is outside the broker's allowed range."""


class RebalanceInProgressError(KafkaError, code=ErrorCode.REBALANCE_IN_PROGRESS):
    """The group is rebalancing; the member must rejoin."""


class InvalidCommitOffsetSizeError(KafkaError, code=ErrorCode.INVALID_COMMIT_OFFSET_SIZE):
    """The committed offset's metadata is too large."""


class AuthorizationError(KafkaError):
    """Base of the ``*_AUTHORIZATION_FAILED`` codes (not itself a code)."""


class TopicAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED
):
    """Not authorized to access the topic."""


class GroupAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.GROUP_AUTHORIZATION_FAILED
):
    """Not authorized to access the group."""


class ClusterAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED
):
    """Not authorized for the cluster-level operation."""


class InvalidTimestampError(KafkaError, code=ErrorCode.INVALID_TIMESTAMP):
    """A record timestamp is outside the broker's accepted window."""


class UnsupportedSaslMechanismError(KafkaError, code=ErrorCode.UNSUPPORTED_SASL_MECHANISM):
    """The broker does not support the requested SASL mechanism."""


class IllegalSaslStateError(KafkaError, code=ErrorCode.ILLEGAL_SASL_STATE):
    """A SASL request arrived in the wrong state of the handshake."""


class UnsupportedVersionError(KafkaError, code=ErrorCode.UNSUPPORTED_VERSION):
    """The api key is known but the version is outside ``SUPPORTED_VERSIONS``.

    ``header`` is the parsed request header, so the broker can answer (the
    KIP-511 ApiVersions fallback) or log before closing the connection.
    """

    def __init__(self, detail: str = "", *, header: RequestHeader | None = None) -> None:
        super().__init__(detail)
        self.header = header


class TopicAlreadyExistsError(KafkaError, code=ErrorCode.TOPIC_ALREADY_EXISTS):
    """A topic with this name already exists."""


class InvalidPartitionsError(KafkaError, code=ErrorCode.INVALID_PARTITIONS):
    """The partition count is invalid."""


class InvalidReplicationFactorError(KafkaError, code=ErrorCode.INVALID_REPLICATION_FACTOR):
    """The replication factor is invalid (e.g. more than the live brokers)."""


class InvalidReplicaAssignmentError(KafkaError, code=ErrorCode.INVALID_REPLICA_ASSIGNMENT):
    """The manual replica assignment is invalid."""


class InvalidConfigError(KafkaError, ValueError, code=ErrorCode.INVALID_CONFIG):
    """A configuration key is unknown or its value is invalid (also a ``ValueError``)."""


class NotControllerError(KafkaError, code=ErrorCode.NOT_CONTROLLER, retriable=True):
    """This broker is not the active controller."""


class InvalidRequestError(KafkaError, code=ErrorCode.INVALID_REQUEST):
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
    KafkaError, code=ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT
):
    """The request needs a newer message format than the topic's."""


class PolicyViolationError(KafkaError, code=ErrorCode.POLICY_VIOLATION):
    """The request violates a configured policy."""


class OutOfOrderSequenceNumberError(KafkaError, code=ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER):
    """The broker received an out-of-order sequence number from an idempotent producer."""


class DuplicateSequenceNumberError(KafkaError, code=ErrorCode.DUPLICATE_SEQUENCE_NUMBER):
    """The broker already has a batch with this sequence number."""


class InvalidProducerEpochError(KafkaError, code=ErrorCode.INVALID_PRODUCER_EPOCH):
    """The producer's epoch is older than the broker's: another instance took over."""


class InvalidTxnStateError(KafkaError, code=ErrorCode.INVALID_TXN_STATE):
    """The operation is not valid in the transaction's current state."""


class InvalidProducerIdMappingError(KafkaError, code=ErrorCode.INVALID_PRODUCER_ID_MAPPING):
    """The producer id does not match the transactional id."""


class InvalidTransactionTimeoutError(KafkaError, code=ErrorCode.INVALID_TRANSACTION_TIMEOUT):
    """The transaction timeout exceeds the broker's maximum."""


class ConcurrentTransactionsError(
    KafkaError, code=ErrorCode.CONCURRENT_TRANSACTIONS, retriable=True
):
    """Another transaction for this producer is still completing."""


class TransactionalIdAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
):
    """Not authorized to use the transactional id."""


class SecurityDisabledError(KafkaError, code=ErrorCode.SECURITY_DISABLED):
    """The broker has no authorizer (``authorizer.class.name`` is empty)."""


class OperationNotAttemptedError(KafkaError, code=ErrorCode.OPERATION_NOT_ATTEMPTED):
    """The broker did not attempt this operation because another in the request failed."""


class KafkaStorageError(KafkaError, code=ErrorCode.KAFKA_STORAGE_ERROR, retriable=True):
    """The broker's log directory for the partition failed."""


class SaslAuthenticationFailedError(KafkaError, code=ErrorCode.SASL_AUTHENTICATION_FAILED):
    """SASL authentication failed."""


class UnknownProducerIdError(KafkaError, code=ErrorCode.UNKNOWN_PRODUCER_ID):
    """The broker has no state for this producer id (it may have expired)."""


class NonEmptyGroupError(KafkaError, code=ErrorCode.NON_EMPTY_GROUP):
    """The group still has members."""


class GroupIdNotFoundError(KafkaError, code=ErrorCode.GROUP_ID_NOT_FOUND):
    """The group does not exist."""


class FetchSessionIdNotFoundError(
    KafkaError, code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, retriable=True
):
    """The fetch session id is not known to the broker."""


class InvalidFetchSessionEpochError(
    KafkaError, code=ErrorCode.INVALID_FETCH_SESSION_EPOCH, retriable=True
):
    """The fetch session epoch is not the next one."""


class ListenerNotFoundError(KafkaError, code=ErrorCode.LISTENER_NOT_FOUND, retriable=True):
    """The leader has no endpoint for the listener the request arrived on."""


class TopicDeletionDisabledError(KafkaError, code=ErrorCode.TOPIC_DELETION_DISABLED):
    """Topic deletion is disabled on this cluster."""


class FencedLeaderEpochError(KafkaError, code=ErrorCode.FENCED_LEADER_EPOCH, retriable=True):
    """The request's leader epoch is older than the broker's."""


class UnknownLeaderEpochError(KafkaError, code=ErrorCode.UNKNOWN_LEADER_EPOCH, retriable=True):
    """The request's leader epoch is newer than the broker's."""


class UnsupportedCompressionTypeError(KafkaError, code=ErrorCode.UNSUPPORTED_COMPRESSION_TYPE):
    """The compression codec is not supported at this request version."""


class StaleBrokerEpochError(KafkaError, code=ErrorCode.STALE_BROKER_EPOCH):
    """The broker epoch in the request is older than the controller's record of it."""


class OffsetNotAvailableError(KafkaError, code=ErrorCode.OFFSET_NOT_AVAILABLE, retriable=True):
    """The leader's high watermark has not caught up with its start offset yet."""


class MemberIdRequiredError(KafkaError, code=ErrorCode.MEMBER_ID_REQUIRED):
    """The member must rejoin with the member id the coordinator assigned."""


class GroupMaxSizeReachedError(KafkaError, code=ErrorCode.GROUP_MAX_SIZE_REACHED):
    """The group is at its maximum size."""


class FencedInstanceIdError(KafkaError, code=ErrorCode.FENCED_INSTANCE_ID):
    """Another member with the same group.instance.id took over."""


class InvalidRecordError(KafkaError, code=ErrorCode.INVALID_RECORD):
    """A well-formed batch the log refuses (e.g. a null key on a compacted topic)."""


class UnstableOffsetCommitError(
    KafkaError, code=ErrorCode.UNSTABLE_OFFSET_COMMIT, retriable=True
):
    """A transactional offset commit for the partition is pending."""


class ThrottlingQuotaExceededError(
    KafkaError, code=ErrorCode.THROTTLING_QUOTA_EXCEEDED, retriable=True
):
    """The request was refused because of a throttling quota."""


class ProducerFencedError(KafkaError, code=ErrorCode.PRODUCER_FENCED):
    """A newer producer with the same transactional id exists."""


class InconsistentVoterSetError(KafkaError, code=ErrorCode.INCONSISTENT_VOTER_SET):
    """The sender is not in the receiver's set of quorum voters (or the reverse)."""


class InvalidUpdateVersionError(KafkaError, code=ErrorCode.INVALID_UPDATE_VERSION):
    """The partition epoch of an AlterPartition does not match the controller's."""


class SnapshotNotFoundError(KafkaError, code=ErrorCode.SNAPSHOT_NOT_FOUND):
    """The requested snapshot does not exist (the leader took a newer one)."""


class PositionOutOfRangeError(KafkaError, code=ErrorCode.POSITION_OUT_OF_RANGE):
    """The requested position is outside the snapshot's bytes."""


class UnknownTopicIdError(KafkaError, code=ErrorCode.UNKNOWN_TOPIC_ID, retriable=True):
    """This broker does not know the topic id (metadata may be stale)."""


class DuplicateBrokerRegistrationError(KafkaError, code=ErrorCode.DUPLICATE_BROKER_REGISTRATION):
    """Another live broker registered with this node id."""


class BrokerIdNotRegisteredError(KafkaError, code=ErrorCode.BROKER_ID_NOT_REGISTERED):
    """The controller has no registration for this broker id."""


class InconsistentTopicIdError(
    KafkaError, code=ErrorCode.INCONSISTENT_TOPIC_ID, retriable=True
):
    """The topic id does not match the topic's (it was deleted and re-created)."""


class InconsistentClusterIdError(KafkaError, code=ErrorCode.INCONSISTENT_CLUSTER_ID):
    """The request's cluster id is not this cluster's."""


class IneligibleReplicaError(KafkaError, code=ErrorCode.INELIGIBLE_REPLICA):
    """A new ISR member is not an eligible (unfenced, registered) replica."""


class NewLeaderElectedError(KafkaError, code=ErrorCode.NEW_LEADER_ELECTED):
    """The partition's leader changed while the request was pending."""
