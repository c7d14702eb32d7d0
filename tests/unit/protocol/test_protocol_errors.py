"""Kafka error codes as classes: the registry, the generic fallback, the drawn tree."""

from __future__ import annotations

import inspect

import pytest

from log_engine.protocol import errors
from log_engine.protocol.errors import (
    CorruptResponseError,
    InvalidRequestError,
    KafkaError,
    NotLeaderOrFollowerError,
    UnknownApiKeyError,
    UnrecognizedKafkaError,
    UnsupportedVersionError,
    error_for_code,
)

# The codes the broker and client use (the brief's list).
REQUIRED = {
    -1: "UNKNOWN_SERVER_ERROR", 1: "OFFSET_OUT_OF_RANGE", 2: "CORRUPT_MESSAGE",
    3: "UNKNOWN_TOPIC_OR_PARTITION", 4: "INVALID_FETCH_SIZE", 5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT", 10: "MESSAGE_TOO_LARGE",
    13: "NETWORK_EXCEPTION", 14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR", 17: "INVALID_TOPIC_EXCEPTION",
    19: "NOT_ENOUGH_REPLICAS", 20: "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    22: "ILLEGAL_GENERATION", 23: "INCONSISTENT_GROUP_PROTOCOL", 24: "INVALID_GROUP_ID",
    25: "UNKNOWN_MEMBER_ID", 26: "INVALID_SESSION_TIMEOUT", 27: "REBALANCE_IN_PROGRESS",
    28: "INVALID_COMMIT_OFFSET_SIZE", 29: "TOPIC_AUTHORIZATION_FAILED",
    30: "GROUP_AUTHORIZATION_FAILED", 31: "CLUSTER_AUTHORIZATION_FAILED",
    35: "UNSUPPORTED_VERSION", 36: "TOPIC_ALREADY_EXISTS", 37: "INVALID_PARTITIONS",
    38: "INVALID_REPLICATION_FACTOR", 39: "INVALID_REPLICA_ASSIGNMENT", 40: "INVALID_CONFIG",
    41: "NOT_CONTROLLER", 42: "INVALID_REQUEST", 43: "UNSUPPORTED_FOR_MESSAGE_FORMAT",
    44: "POLICY_VIOLATION", 45: "OUT_OF_ORDER_SEQUENCE_NUMBER",
    46: "DUPLICATE_SEQUENCE_NUMBER", 47: "INVALID_PRODUCER_EPOCH",
    49: "INVALID_PRODUCER_ID_MAPPING", 56: "KAFKA_STORAGE_ERROR",
    58: "SASL_AUTHENTICATION_FAILED", 59: "UNKNOWN_PRODUCER_ID", 69: "GROUP_ID_NOT_FOUND",
    72: "LISTENER_NOT_FOUND", 74: "FENCED_LEADER_EPOCH", 75: "UNKNOWN_LEADER_EPOCH",
    76: "UNSUPPORTED_COMPRESSION_TYPE", 79: "MEMBER_ID_REQUIRED", 82: "FENCED_INSTANCE_ID",
    87: "INVALID_RECORD", 89: "THROTTLING_QUOTA_EXCEEDED",
}  # fmt: skip
RETRIABLE = {2, 3, 5, 6, 7, 13, 14, 15, 16, 19, 20, 41, 56, 72, 74, 75, 89}


@pytest.mark.parametrize(("code", "name"), sorted(REQUIRED.items()))
def test_required_codes_have_classes(code: int, name: str) -> None:
    cls = error_for_code(code)
    assert issubclass(cls, KafkaError) and not issubclass(cls, UnrecognizedKafkaError)
    assert (cls.errno, cls.message) == (code, name)
    assert cls.retriable == (code in RETRIABLE)
    assert cls.__doc__


def test_registered_classes_are_one_per_code() -> None:
    registered = [
        cls
        for cls in vars(errors).values()
        if inspect.isclass(cls)
        and issubclass(cls, KafkaError)
        and cls is not KafkaError
        and "errno" in vars(cls)
    ]
    assert len({cls.errno for cls in registered}) == len(registered)
    for cls in registered:
        assert error_for_code(cls.errno) is cls


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


def test_decode_exceptions_sit_in_the_tree() -> None:
    assert UnsupportedVersionError.errno == 35
    assert InvalidRequestError.errno == 42
    assert issubclass(UnknownApiKeyError, InvalidRequestError)
    assert error_for_code(42) is InvalidRequestError  # not the subclass
    assert error_for_code(13) is not CorruptResponseError
    assert UnsupportedVersionError().header is None


def test_docstring_tree_names_every_class() -> None:
    tree = errors.__doc__ or ""
    for name, obj in vars(errors).items():
        if (
            inspect.isclass(obj)
            and issubclass(obj, Exception)
            and obj.__module__ == errors.__name__
        ):
            assert name in tree, name
