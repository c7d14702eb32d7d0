"""The controller listener's ACL gate: every API has an operation, every refusal encodes."""

from __future__ import annotations

from typing import Any

import pytest

from log_engine.acls import AclOperation
from log_engine.broker.authorization.controller import (
    CONTROLLER_OPERATIONS,
    CONTROLLER_UNGATED,
    guard_controller,
    refusal,
)
from log_engine.broker.handlers.quorum import CONTROLLER_HANDLERS
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey, RequestHeader, encode_response
from log_engine.protocol.versions import CONTROLLER_VERSIONS

DENIED = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)

REQUESTS: dict[ApiKey, dict[str, Any]] = {
    ApiKey.CREATE_TOPICS: {"topics": [{"name": "a"}, {"name": "b"}]},
    ApiKey.DELETE_TOPICS: {"topic_names": ["a"]},
    ApiKey.CREATE_PARTITIONS: {"topics": [{"name": "a"}]},
    ApiKey.INCREMENTAL_ALTER_CONFIGS: {"resources": [{"resource_type": 2, "resource_name": "a"}]},
    ApiKey.CREATE_ACLS: {"creations": [{}, {}]},
    ApiKey.DELETE_ACLS: {"filters": [{}]},
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: {"deletions": [{"name": "u"}], "upsertions": []},
}


def test_every_controller_api_needs_a_cluster_operation() -> None:
    assert set(CONTROLLER_HANDLERS) <= set(CONTROLLER_OPERATIONS) | CONTROLLER_UNGATED
    assert CONTROLLER_OPERATIONS[ApiKey.BROKER_REGISTRATION] == AclOperation.CLUSTER_ACTION
    assert CONTROLLER_OPERATIONS[ApiKey.VOTE] == AclOperation.CLUSTER_ACTION
    assert CONTROLLER_OPERATIONS[ApiKey.DESCRIBE_QUORUM] == AclOperation.DESCRIBE
    assert guard_controller(CONTROLLER_HANDLERS).keys() == CONTROLLER_HANDLERS.keys()


@pytest.mark.parametrize("api_key", sorted(CONTROLLER_OPERATIONS))
def test_each_refusal_encodes_at_every_served_version(api_key: ApiKey) -> None:
    request = REQUESTS.get(api_key, {})
    body = refusal(api_key, request, "User:mallory is not allowed")
    codes = [body.get("error_code")] + [
        item["error_code"]
        for key in ("topics", "responses", "results", "filter_results")
        for item in body.get(key, [])
        if "error_code" in item
    ]
    assert DENIED in codes
    low, high = CONTROLLER_VERSIONS[api_key]
    for version in range(low, high + 1):
        frame = b"".join(
            bytes(c) for c in encode_response(RequestHeader(api_key, version, 1, None), body)
        )
        assert len(frame) > 8
