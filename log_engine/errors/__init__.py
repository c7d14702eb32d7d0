"""Sluice's one error vocabulary: Kafka's error codes as classes, and Sluice's own errors.

Every error the broker answers with, the client raises and storage or the Raft
core signals is a :class:`KafkaError`. Each code has one class (``errno``,
``message`` = Kafka's name, ``retriable`` = whether the same request may succeed
later unchanged); :func:`error_for_code` turns a wire code into its class, and
:class:`ErrorCode` names the numbers for ``error_code`` fields. Sluice's own
errors refine the class of the code they answer with, so a handler catches
``KafkaError`` and answers ``error.errno``. Code 0 (``NONE``) is not an error.
``R`` marks a retriable code (Kafka's ``RetriableException``; a test checks the
flags against Kafka's list).

::

    KafkaError                                      errno, message, retriable, detail
    ├── UnknownServerError                            -1
    ├── OffsetOutOfRangeError                          1
    ├── CorruptMessageError                            2 R
    │   ├── InvalidMagicError                              magic byte is not 2
    │   ├── CrcMismatchError                               CRC-32C does not match
    │   └── TruncatedBatchError                            fewer bytes than batchLength says
    ├── UnknownTopicOrPartitionError                   3 R
    ├── InvalidFetchSizeError                          4
    ├── LeaderNotAvailableError                        5 R
    ├── NotLeaderOrFollowerError                       6 R
    ├── RequestTimedOutError                           7 R
    ├── BrokerNotAvailableError                        8
    ├── ReplicaNotAvailableError                       9 R
    ├── MessageTooLargeError                          10
    ├── OffsetMetadataTooLargeError                   12
    ├── NetworkExceptionError                         13 R
    │   └── CorruptResponseError                           unparsable response (client)
    ├── CoordinatorLoadInProgressError                14 R
    ├── CoordinatorNotAvailableError                  15 R
    ├── NotCoordinatorError                           16 R
    ├── InvalidTopicError                             17
    ├── RecordListTooLargeError                       18
    ├── NotEnoughReplicasError                        19 R
    ├── NotEnoughReplicasAfterAppendError             20 R
    ├── InvalidRequiredAcksError                      21
    ├── IllegalGenerationError                        22
    ├── InconsistentGroupProtocolError                23
    ├── InvalidGroupIdError                           24
    ├── UnknownMemberIdError                          25
    ├── InvalidSessionTimeoutError                    26
    ├── RebalanceInProgressError                      27
    ├── InvalidCommitOffsetSizeError                  28
    ├── AuthorizationError                                 abstract: any *_AUTHORIZATION_FAILED
    │   ├── TopicAuthorizationFailedError             29
    │   ├── GroupAuthorizationFailedError             30
    │   ├── ClusterAuthorizationFailedError           31
    │   └── TransactionalIdAuthorizationFailedError   53
    ├── InvalidTimestampError                         32
    ├── UnsupportedSaslMechanismError                 33
    ├── IllegalSaslStateError                         34
    ├── UnsupportedVersionError                       35   .header: the request's header
    ├── TopicAlreadyExistsError                       36
    ├── InvalidPartitionsError                        37
    ├── InvalidReplicationFactorError                 38
    ├── InvalidReplicaAssignmentError                 39
    ├── InvalidConfigError                            40   also a ValueError
    ├── NotControllerError                            41 R
    ├── InvalidRequestError                           42   .header: None if < 8 bytes
    │   └── UnknownApiKeyError                             api key outside ApiKey
    ├── UnsupportedForMessageFormatError              43
    ├── PolicyViolationError                          44
    ├── OutOfOrderSequenceNumberError                 45
    ├── DuplicateSequenceNumberError                  46
    ├── InvalidProducerEpochError                     47
    ├── InvalidTxnStateError                          48
    ├── InvalidProducerIdMappingError                 49
    ├── InvalidTransactionTimeoutError                50
    ├── ConcurrentTransactionsError                   51 R
    ├── SecurityDisabledError                         54
    ├── OperationNotAttemptedError                    55
    ├── KafkaStorageError                             56 R
    │   ├── LogDirLockedError                              another process owns the directory
    │   ├── LogDirOfflineError                             a write failed: no more writes
    │   └── CorruptIndexError                              an index file fails its sanity check
    ├── SaslAuthenticationFailedError                 58
    ├── UnknownProducerIdError                        59
    ├── NonEmptyGroupError                            68
    ├── GroupIdNotFoundError                          69
    ├── FetchSessionIdNotFoundError                   70 R
    ├── InvalidFetchSessionEpochError                 71 R
    ├── ListenerNotFoundError                         72 R
    ├── TopicDeletionDisabledError                    73
    ├── FencedLeaderEpochError                        74 R
    ├── UnknownLeaderEpochError                       75 R
    ├── UnsupportedCompressionTypeError               76
    ├── StaleBrokerEpochError                         77
    ├── OffsetNotAvailableError                       78 R
    ├── MemberIdRequiredError                         79
    ├── GroupMaxSizeReachedError                      81
    ├── FencedInstanceIdError                         82
    ├── InvalidRecordError                            87
    │   ├── UnexpectedAppendOffsetError                    replica batch below log end
    │   └── MalformedRecordError                           CRC-valid batch, garbage records
    ├── UnstableOffsetCommitError                     88 R
    ├── ThrottlingQuotaExceededError                  89 R
    ├── ProducerFencedError                           90
    ├── InconsistentVoterSetError                     94
    ├── InvalidUpdateVersionError                     95
    ├── SnapshotNotFoundError                         98
    ├── PositionOutOfRangeError                       99
    ├── UnknownTopicIdError                          100 R
    ├── DuplicateBrokerRegistrationError             101
    ├── BrokerIdNotRegisteredError                   102
    ├── InconsistentTopicIdError                     103 R
    ├── InconsistentClusterIdError                   104
    ├── IneligibleReplicaError                       107
    ├── NewLeaderElectedError                        108
    ├── NoOffsetForPartitionError                          client: reset=none, no commit
    ├── ClientClosedError                                  client: closed while the call waited
    ├── PartialDeliveryError                               client: send_many partly landed
    ├── RaftError                                          Raft core: abstract
    │   ├── NotLeaderError                                 (also NotLeaderOrFollowerError, 6)
    │   ├── InvalidSnapshotError                           snapshot offset not covered
    │   └── CorruptRaftStateError                          (also KafkaStorageError, 56)
    ├── MetadataError                                      cluster metadata: abstract
    │   ├── MetadataRecordError                            bytes that are not a record
    │   └── MetadataReplayError                            a record the image cannot apply
    └── UnrecognizedKafkaError                             any other code (cached)

Outside the tree, two errors of the protocol codec (both ``ValueError``):
:class:`ProtocolDecodeError` (bytes that do not match a schema; internal,
``decode_request`` maps it to ``InvalidRequestError`` and ``decode_response`` to
``CorruptResponseError``) and :class:`EncodeError` (a body that does not fit its
schema: a bug in the caller that built it).

Modules: ``codes`` (the numbers), ``base`` (the base class, the registry, the
codec errors), ``kafka`` (one class per code), ``refinements`` (storage, client
and Raft errors).
"""

from log_engine.errors.base import (
    EncodeError,
    KafkaError,
    ProtocolDecodeError,
    UnrecognizedKafkaError,
    error_for_code,
    registered_classes,
)
from log_engine.errors.codes import ErrorCode
from log_engine.errors.kafka import (
    AuthorizationError,
    BrokerIdNotRegisteredError,
    BrokerNotAvailableError,
    ClusterAuthorizationFailedError,
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    CorruptMessageError,
    CorruptResponseError,
    DuplicateBrokerRegistrationError,
    DuplicateSequenceNumberError,
    FencedInstanceIdError,
    FencedLeaderEpochError,
    FetchSessionIdNotFoundError,
    GroupAuthorizationFailedError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    IllegalGenerationError,
    IllegalSaslStateError,
    InconsistentClusterIdError,
    InconsistentGroupProtocolError,
    InconsistentTopicIdError,
    InconsistentVoterSetError,
    IneligibleReplicaError,
    InvalidCommitOffsetSizeError,
    InvalidConfigError,
    InvalidFetchSessionEpochError,
    InvalidFetchSizeError,
    InvalidGroupIdError,
    InvalidPartitionsError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    InvalidRecordError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidRequiredAcksError,
    InvalidSessionTimeoutError,
    InvalidTimestampError,
    InvalidTopicError,
    InvalidTransactionTimeoutError,
    InvalidTxnStateError,
    InvalidUpdateVersionError,
    KafkaStorageError,
    LeaderNotAvailableError,
    ListenerNotFoundError,
    MemberIdRequiredError,
    MessageTooLargeError,
    NetworkExceptionError,
    NewLeaderElectedError,
    NonEmptyGroupError,
    NotControllerError,
    NotCoordinatorError,
    NotEnoughReplicasAfterAppendError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    OffsetMetadataTooLargeError,
    OffsetNotAvailableError,
    OffsetOutOfRangeError,
    OperationNotAttemptedError,
    OutOfOrderSequenceNumberError,
    PolicyViolationError,
    PositionOutOfRangeError,
    ProducerFencedError,
    RebalanceInProgressError,
    RecordListTooLargeError,
    ReplicaNotAvailableError,
    RequestTimedOutError,
    SaslAuthenticationFailedError,
    SecurityDisabledError,
    SnapshotNotFoundError,
    StaleBrokerEpochError,
    ThrottlingQuotaExceededError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    TopicDeletionDisabledError,
    TransactionalIdAuthorizationFailedError,
    UnknownApiKeyError,
    UnknownLeaderEpochError,
    UnknownMemberIdError,
    UnknownProducerIdError,
    UnknownServerError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
    UnstableOffsetCommitError,
    UnsupportedCompressionTypeError,
    UnsupportedForMessageFormatError,
    UnsupportedSaslMechanismError,
    UnsupportedVersionError,
)
from log_engine.errors.refinements import (
    ClientClosedError,
    CorruptIndexError,
    CorruptRaftStateError,
    CrcMismatchError,
    InvalidMagicError,
    InvalidSnapshotError,
    LogDirLockedError,
    LogDirOfflineError,
    MalformedRecordError,
    MetadataError,
    MetadataRecordError,
    MetadataReplayError,
    NoOffsetForPartitionError,
    NotLeaderError,
    PartialDeliveryError,
    RaftError,
    TruncatedBatchError,
    UnexpectedAppendOffsetError,
)

__all__ = [
    "AuthorizationError",
    "BrokerIdNotRegisteredError",
    "BrokerNotAvailableError",
    "ClientClosedError",
    "ClusterAuthorizationFailedError",
    "ConcurrentTransactionsError",
    "CoordinatorLoadInProgressError",
    "CoordinatorNotAvailableError",
    "CorruptIndexError",
    "CorruptMessageError",
    "CorruptRaftStateError",
    "CorruptResponseError",
    "CrcMismatchError",
    "DuplicateBrokerRegistrationError",
    "DuplicateSequenceNumberError",
    "EncodeError",
    "ErrorCode",
    "FencedInstanceIdError",
    "FencedLeaderEpochError",
    "FetchSessionIdNotFoundError",
    "GroupAuthorizationFailedError",
    "GroupIdNotFoundError",
    "GroupMaxSizeReachedError",
    "IllegalGenerationError",
    "IllegalSaslStateError",
    "InconsistentClusterIdError",
    "InconsistentGroupProtocolError",
    "InconsistentTopicIdError",
    "InconsistentVoterSetError",
    "IneligibleReplicaError",
    "InvalidCommitOffsetSizeError",
    "InvalidConfigError",
    "InvalidFetchSessionEpochError",
    "InvalidFetchSizeError",
    "InvalidGroupIdError",
    "InvalidMagicError",
    "InvalidPartitionsError",
    "InvalidProducerEpochError",
    "InvalidProducerIdMappingError",
    "InvalidRecordError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidRequestError",
    "InvalidRequiredAcksError",
    "InvalidSessionTimeoutError",
    "InvalidSnapshotError",
    "InvalidTimestampError",
    "InvalidTopicError",
    "InvalidTransactionTimeoutError",
    "InvalidTxnStateError",
    "InvalidUpdateVersionError",
    "KafkaError",
    "KafkaStorageError",
    "LeaderNotAvailableError",
    "ListenerNotFoundError",
    "LogDirLockedError",
    "LogDirOfflineError",
    "MalformedRecordError",
    "MemberIdRequiredError",
    "MessageTooLargeError",
    "MetadataError",
    "MetadataRecordError",
    "MetadataReplayError",
    "NetworkExceptionError",
    "NewLeaderElectedError",
    "NoOffsetForPartitionError",
    "NonEmptyGroupError",
    "NotControllerError",
    "NotCoordinatorError",
    "NotEnoughReplicasAfterAppendError",
    "NotEnoughReplicasError",
    "NotLeaderError",
    "NotLeaderOrFollowerError",
    "OffsetMetadataTooLargeError",
    "OffsetNotAvailableError",
    "OffsetOutOfRangeError",
    "OperationNotAttemptedError",
    "OutOfOrderSequenceNumberError",
    "PartialDeliveryError",
    "PolicyViolationError",
    "PositionOutOfRangeError",
    "ProducerFencedError",
    "ProtocolDecodeError",
    "RaftError",
    "RebalanceInProgressError",
    "RecordListTooLargeError",
    "ReplicaNotAvailableError",
    "RequestTimedOutError",
    "SaslAuthenticationFailedError",
    "SecurityDisabledError",
    "SnapshotNotFoundError",
    "StaleBrokerEpochError",
    "ThrottlingQuotaExceededError",
    "TopicAlreadyExistsError",
    "TopicAuthorizationFailedError",
    "TopicDeletionDisabledError",
    "TransactionalIdAuthorizationFailedError",
    "TruncatedBatchError",
    "UnexpectedAppendOffsetError",
    "UnknownApiKeyError",
    "UnknownLeaderEpochError",
    "UnknownMemberIdError",
    "UnknownProducerIdError",
    "UnknownServerError",
    "UnknownTopicIdError",
    "UnknownTopicOrPartitionError",
    "UnrecognizedKafkaError",
    "UnstableOffsetCommitError",
    "UnsupportedCompressionTypeError",
    "UnsupportedForMessageFormatError",
    "UnsupportedSaslMechanismError",
    "UnsupportedVersionError",
    "error_for_code",
    "registered_classes",
]
