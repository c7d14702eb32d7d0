"""The one error vocabulary (log_engine.errors): codes, classes, Kafka's retriability, the tree."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import log_engine
from log_engine import errors
from log_engine.errors import (
    CorruptMessageError,
    CorruptRaftStateError,
    CorruptResponseError,
    CrcMismatchError,
    ErrorCode,
    InvalidConfigError,
    InvalidRequestError,
    KafkaError,
    KafkaStorageError,
    LogDirOfflineError,
    MalformedRecordError,
    NotLeaderError,
    NotLeaderOrFollowerError,
    UnknownApiKeyError,
    UnrecognizedKafkaError,
    UnsupportedVersionError,
    error_for_code,
    registered_classes,
)

# Kafka's own table for every code Sluice names: code -> (name, retriable). Read from
# apache/kafka's clients/.../common/protocol/Errors.java (1eb76443, 2024-10-25); a
# code is retriable when its exception class extends RetriableException.
KAFKA = {
    -1: ("UNKNOWN_SERVER_ERROR", False), 1: ("OFFSET_OUT_OF_RANGE", False),
    2: ("CORRUPT_MESSAGE", True), 3: ("UNKNOWN_TOPIC_OR_PARTITION", True),
    4: ("INVALID_FETCH_SIZE", False), 5: ("LEADER_NOT_AVAILABLE", True),
    6: ("NOT_LEADER_OR_FOLLOWER", True), 7: ("REQUEST_TIMED_OUT", True),
    8: ("BROKER_NOT_AVAILABLE", False), 9: ("REPLICA_NOT_AVAILABLE", True),
    10: ("MESSAGE_TOO_LARGE", False), 12: ("OFFSET_METADATA_TOO_LARGE", False),
    13: ("NETWORK_EXCEPTION", True), 14: ("COORDINATOR_LOAD_IN_PROGRESS", True),
    15: ("COORDINATOR_NOT_AVAILABLE", True), 16: ("NOT_COORDINATOR", True),
    17: ("INVALID_TOPIC_EXCEPTION", False), 18: ("RECORD_LIST_TOO_LARGE", False),
    19: ("NOT_ENOUGH_REPLICAS", True), 20: ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", True),
    21: ("INVALID_REQUIRED_ACKS", False), 22: ("ILLEGAL_GENERATION", False),
    23: ("INCONSISTENT_GROUP_PROTOCOL", False), 24: ("INVALID_GROUP_ID", False),
    25: ("UNKNOWN_MEMBER_ID", False), 26: ("INVALID_SESSION_TIMEOUT", False),
    27: ("REBALANCE_IN_PROGRESS", False), 28: ("INVALID_COMMIT_OFFSET_SIZE", False),
    29: ("TOPIC_AUTHORIZATION_FAILED", False), 30: ("GROUP_AUTHORIZATION_FAILED", False),
    31: ("CLUSTER_AUTHORIZATION_FAILED", False), 32: ("INVALID_TIMESTAMP", False),
    33: ("UNSUPPORTED_SASL_MECHANISM", False), 34: ("ILLEGAL_SASL_STATE", False),
    35: ("UNSUPPORTED_VERSION", False), 36: ("TOPIC_ALREADY_EXISTS", False),
    37: ("INVALID_PARTITIONS", False), 38: ("INVALID_REPLICATION_FACTOR", False),
    39: ("INVALID_REPLICA_ASSIGNMENT", False), 40: ("INVALID_CONFIG", False),
    41: ("NOT_CONTROLLER", True), 42: ("INVALID_REQUEST", False),
    43: ("UNSUPPORTED_FOR_MESSAGE_FORMAT", False), 44: ("POLICY_VIOLATION", False),
    45: ("OUT_OF_ORDER_SEQUENCE_NUMBER", False), 46: ("DUPLICATE_SEQUENCE_NUMBER", False),
    47: ("INVALID_PRODUCER_EPOCH", False), 48: ("INVALID_TXN_STATE", False),
    49: ("INVALID_PRODUCER_ID_MAPPING", False), 50: ("INVALID_TRANSACTION_TIMEOUT", False),
    51: ("CONCURRENT_TRANSACTIONS", True), 53: ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False),
    54: ("SECURITY_DISABLED", False), 55: ("OPERATION_NOT_ATTEMPTED", False),
    56: ("KAFKA_STORAGE_ERROR", True),
    58: ("SASL_AUTHENTICATION_FAILED", False), 59: ("UNKNOWN_PRODUCER_ID", False),
    68: ("NON_EMPTY_GROUP", False), 69: ("GROUP_ID_NOT_FOUND", False),
    70: ("FETCH_SESSION_ID_NOT_FOUND", True), 71: ("INVALID_FETCH_SESSION_EPOCH", True),
    72: ("LISTENER_NOT_FOUND", True), 73: ("TOPIC_DELETION_DISABLED", False),
    74: ("FENCED_LEADER_EPOCH", True), 75: ("UNKNOWN_LEADER_EPOCH", True),
    76: ("UNSUPPORTED_COMPRESSION_TYPE", False), 77: ("STALE_BROKER_EPOCH", False),
    78: ("OFFSET_NOT_AVAILABLE", True), 79: ("MEMBER_ID_REQUIRED", False),
    81: ("GROUP_MAX_SIZE_REACHED", False), 82: ("FENCED_INSTANCE_ID", False),
    87: ("INVALID_RECORD", False), 88: ("UNSTABLE_OFFSET_COMMIT", True),
    89: ("THROTTLING_QUOTA_EXCEEDED", True), 90: ("PRODUCER_FENCED", False),
    94: ("INCONSISTENT_VOTER_SET", False), 95: ("INVALID_UPDATE_VERSION", False),
    98: ("SNAPSHOT_NOT_FOUND", False), 99: ("POSITION_OUT_OF_RANGE", False),
    100: ("UNKNOWN_TOPIC_ID", True), 101: ("DUPLICATE_BROKER_REGISTRATION", False),
    102: ("BROKER_ID_NOT_REGISTERED", False), 103: ("INCONSISTENT_TOPIC_ID", True),
    104: ("INCONSISTENT_CLUSTER_ID", False), 107: ("INELIGIBLE_REPLICA", False),
    108: ("NEW_LEADER_ELECTED", False),
}  # fmt: skip
CODES = [code for code in ErrorCode if code != ErrorCode.NONE]


def _error_classes() -> list[type[KafkaError]]:
    """Every class the package exports, once (the old names are aliases of these)."""
    return [
        obj
        for name, obj in vars(errors).items()
        if inspect.isclass(obj) and issubclass(obj, KafkaError) and name == obj.__name__
    ]


@pytest.mark.parametrize("code", CODES, ids=lambda code: code.name)
def test_each_code_has_one_class_with_kafkas_name_and_retriability(code: ErrorCode) -> None:
    cls = error_for_code(code)
    assert issubclass(cls, KafkaError) and not issubclass(cls, UnrecognizedKafkaError)
    assert (cls.errno, cls.message, cls.retriable) == (code, *KAFKA[code])
    assert cls.__doc__


def test_error_code_lists_exactly_the_codes_with_classes() -> None:
    assert set(registered_classes()) == set(CODES) == set(KAFKA)
    assert len(ErrorCode) == len({int(code) for code in ErrorCode})  # no number twice


def test_each_code_is_defined_once_in_the_tree() -> None:
    own_code = [
        cls
        for cls in _error_classes()
        if "errno" in vars(cls) and cls not in (KafkaError, UnrecognizedKafkaError)
    ]
    assert sorted(cls.errno for cls in own_code) == sorted(CODES)
    for cls in own_code:
        assert error_for_code(cls.errno) is cls


def test_only_the_errors_package_writes_error_numbers() -> None:
    """No other module of log_engine names an ErrorCode member's number in an IntEnum."""
    root = Path(log_engine.__file__).parent
    enum_member = re.compile(r"^\s+[A-Z_]+ = -?\d+$", re.M)
    for path in root.rglob("*.py"):
        if path.parent.name == "errors" or "IntEnum" not in path.read_text():
            continue
        text = path.read_text()
        for name in ("NOT_LEADER_OR_FOLLOWER", "UNKNOWN_TOPIC_OR_PARTITION", "CORRUPT_MESSAGE"):
            assert not re.search(rf"^\s+{name} = ", text, re.M), (path, name)
        assert "class ErrorCode" not in text or not enum_member.search(text), path


def test_sluice_errors_answer_with_their_parents_code() -> None:
    assert issubclass(CrcMismatchError, CorruptMessageError) and CrcMismatchError.errno == 2
    assert LogDirOfflineError.errno == 56 and LogDirOfflineError.retriable
    assert MalformedRecordError("bad", 3).errno == 87
    assert NotLeaderError.errno == 6 and issubclass(NotLeaderError, NotLeaderOrFollowerError)
    assert issubclass(CorruptRaftStateError, KafkaStorageError)
    assert issubclass(InvalidConfigError, ValueError)
    assert error_for_code(56) is KafkaStorageError  # a refinement never answers a wire code


def test_unknown_codes_get_a_cached_generic_class() -> None:
    cls = error_for_code(9999)
    assert issubclass(cls, UnrecognizedKafkaError)
    assert cls.errno == 9999 and not cls.retriable
    assert error_for_code(9999) is cls
    assert str(cls("boom")) == "[Error 9999] UNKNOWN_ERROR_CODE_9999: boom"


def test_code_zero_is_not_an_error() -> None:
    with pytest.raises(ValueError):
        error_for_code(0)


def test_str_names_code_and_detail() -> None:
    assert str(NotLeaderOrFollowerError()) == "[Error 6] NOT_LEADER_OR_FOLLOWER"
    assert str(NotLeaderOrFollowerError("t-0")) == "[Error 6] NOT_LEADER_OR_FOLLOWER: t-0"
    assert NotLeaderOrFollowerError("t-0").detail == "t-0"


def test_decode_exceptions_sit_in_the_tree() -> None:
    assert UnsupportedVersionError.errno == 35
    assert InvalidRequestError.errno == 42
    assert issubclass(UnknownApiKeyError, InvalidRequestError)
    assert error_for_code(42) is InvalidRequestError  # not the subclass
    assert error_for_code(13) is not CorruptResponseError
    assert UnsupportedVersionError().header is None


def test_docstring_tree_draws_every_class_with_its_code() -> None:
    tree = errors.__doc__ or ""
    for cls in _error_classes():
        if cls is KafkaError:
            continue  # the root
        line = re.search(rf"── {cls.__name__}\b(.*)$", tree, re.M)
        assert line, cls.__name__
        if "errno" in vars(cls) and cls not in (KafkaError, UnrecognizedKafkaError):
            drawn = line.group(1).split()
            assert drawn[0] == str(cls.errno), cls.__name__
            assert (len(drawn) > 1 and drawn[1] == "R") == cls.retriable, cls.__name__
