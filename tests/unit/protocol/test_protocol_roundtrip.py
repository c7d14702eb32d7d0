"""Round trips for every API and every declared version, request and response,
and the compiled-schema coverage of SUPPORTED_VERSIONS and CLIENT_VERSIONS."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import bodies, case_id, declared_versions, plain, supported_versions

from log_engine.protocol import (
    RequestHeader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    schema_for,
)
from log_engine.protocol.apis import REQUESTS, RESPONSES
from log_engine.protocol.schema import CompiledStruct
from log_engine.protocol.types import Reader
from log_engine.protocol.versions import (
    CLIENT_VERSIONS,
    CONTROLLER_VERSIONS,
    SUPPORTED_VERSIONS,
    ApiKey,
    is_supported,
)

ROUND_TRIP = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SUPPORTED = set(supported_versions())


@pytest.mark.parametrize("case", declared_versions("request"), ids=case_id)
@ROUND_TRIP
@given(data=st.data(), correlation_id=st.integers(-(2**31), 2**31 - 1))
def test_request_round_trip(case: tuple[int, int], data: Any, correlation_id: int) -> None:
    api_key, version = case
    schema = schema_for(api_key, version, "request")
    body = data.draw(bodies(schema))
    client_id = data.draw(st.none() | st.text(max_size=10))
    frame = encode_request(api_key, version, correlation_id, client_id, body)
    assert int.from_bytes(frame[:4], "big", signed=True) == len(frame) - 4
    if case in SUPPORTED:
        header, decoded = decode_request(frame[4:])
        assert header == RequestHeader(api_key, version, correlation_id, client_id)
    else:  # declared for our client, not served by the broker: read the body directly
        reader = Reader(frame)
        reader.skip(4 + 8 + 2 + (len(client_id.encode()) if client_id is not None else 0))
        if schema.flexible:  # request header v2: an empty tagged-field section
            assert reader.tagged_fields() == []
        decoded = schema.read(reader)
        assert reader.remaining == 0
    assert plain(decoded) == body


@pytest.mark.parametrize("case", declared_versions("response"), ids=case_id)
@ROUND_TRIP
@given(data=st.data(), correlation_id=st.integers(-(2**31), 2**31 - 1))
def test_response_round_trip(case: tuple[int, int], data: Any, correlation_id: int) -> None:
    api_key, version = case
    body = data.draw(bodies(schema_for(api_key, version, "response")))
    chunks = encode_response(RequestHeader(api_key, version, correlation_id, "c"), body)
    frame = b"".join(chunks)
    assert int.from_bytes(frame[:4], "big", signed=True) == len(frame) - 4
    got_id, decoded = decode_response(api_key, version, frame[4:])
    assert got_id == correlation_id
    assert plain(decoded) == body


def test_every_supported_version_has_compiled_schemas() -> None:
    for key, (lo, hi) in SUPPORTED_VERSIONS.items():
        assert lo <= hi
        for version in range(lo, hi + 1):
            for kind in ("request", "response"):
                schema = schema_for(key, version, kind)  # type: ignore[arg-type]
                assert isinstance(schema, CompiledStruct)
                assert schema is schema_for(key, version, kind)  # type: ignore[arg-type]


def test_every_client_version_has_compiled_schemas() -> None:
    for key, (lo, hi) in CLIENT_VERSIONS.items():
        for version in range(lo, hi + 1):
            request = schema_for(key, version, "request")
            response = schema_for(key, version, "response")
            assert request.flexible == response.flexible == REQUESTS[key].is_flexible(version)


FLEXIBLE_ONLY = {ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, ApiKey.ALTER_USER_SCRAM_CREDENTIALS}
# served up to a flexible version, classic ones too: FindCoordinator v4 batches keys
# (KIP-699), as Java clients and ours ask for coordinators
FLEXIBLE_TOO = {ApiKey.FIND_COORDINATOR}


def test_every_api_key_is_declared_and_served() -> None:
    # the controller listener's APIs are served there only (it also serves
    # ApiVersions, Fetch of __cluster_metadata, and the CreateTopics / DeleteTopics /
    # CreatePartitions / IncrementalAlterConfigs / CreateAcls / DeleteAcls that brokers
    # forward for their clients, and SASL's handshake for a SASL controller listener)
    both = {
        ApiKey.SASL_HANDSHAKE,
        ApiKey.SASL_AUTHENTICATE,
        ApiKey.FETCH,
        ApiKey.API_VERSIONS,
        ApiKey.CREATE_TOPICS,
        ApiKey.DELETE_TOPICS,
        ApiKey.CREATE_PARTITIONS,
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        ApiKey.CREATE_ACLS,
        ApiKey.DELETE_ACLS,
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    }
    controller = set(CONTROLLER_VERSIONS) - both
    served = set(ApiKey) - controller
    assert set(SUPPORTED_VERSIONS) == served == set(CLIENT_VERSIONS)
    assert set(REQUESTS) == served | controller == set(RESPONSES)
    for key in controller:
        lo, hi = REQUESTS[key].versions
        assert lo <= CONTROLLER_VERSIONS[key][0] and CONTROLLER_VERSIONS[key][1] <= hi
        assert RESPONSES[key].versions == REQUESTS[key].versions
    for key in served:
        # the declarations cover both tables: the broker serves classic versions only,
        # the client speaks up to the newest declared versions, flexible ones included
        lo, hi = REQUESTS[key].versions
        assert lo <= SUPPORTED_VERSIONS[key][0] and SUPPORTED_VERSIONS[key][1] <= hi
        assert lo <= CLIENT_VERSIONS[key][0] and CLIENT_VERSIONS[key][1] <= hi
        if key in FLEXIBLE_ONLY:  # KIP-554 has no classic version
            assert REQUESTS[key].is_flexible(SUPPORTED_VERSIONS[key][0])
        elif key in FLEXIBLE_TOO:
            assert not REQUESTS[key].is_flexible(SUPPORTED_VERSIONS[key][0])
        else:
            assert not REQUESTS[key].is_flexible(SUPPORTED_VERSIONS[key][1])
        assert RESPONSES[key].versions == REQUESTS[key].versions
        assert RESPONSES[key].flexible == REQUESTS[key].flexible


def test_controller_apis_are_flexible_and_declared_for_their_versions() -> None:
    broker_to_controller = {56, 62, 63, 67}  # AlterPartition, registration, heartbeat, ids
    quorum = {52, 53, 54, 55, 59}  # Vote, Begin/EndQuorumEpoch, DescribeQuorum, FetchSnapshot
    # also on the client listener (CreateTopics / DeleteTopics / CreatePartitions /
    # IncrementalAlterConfigs / CreateAcls / DeleteAcls: forwarded by brokers; SASL's
    # handshake for a SASL controller listener)
    shared = {
        ApiKey.SASL_HANDSHAKE,
        ApiKey.SASL_AUTHENTICATE,
        ApiKey.FETCH,
        ApiKey.API_VERSIONS,
        ApiKey.CREATE_TOPICS,
        ApiKey.DELETE_TOPICS,
        ApiKey.CREATE_PARTITIONS,
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        ApiKey.CREATE_ACLS,
        ApiKey.DELETE_ACLS,
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    }
    assert set(CONTROLLER_VERSIONS) == broker_to_controller | quorum | shared
    for key, (lo, hi) in CONTROLLER_VERSIONS.items():
        if key in shared:
            continue
        if key in broker_to_controller:
            assert REQUESTS[key].versions == (lo, hi) == RESPONSES[key].versions
        assert key not in CLIENT_VERSIONS
        assert REQUESTS[key].is_flexible(hi) and RESPONSES[key].is_flexible(hi)
        assert not is_supported(key, lo)  # not on the client listener


def test_supported_table_is_the_non_flexible_subset() -> None:
    assert SUPPORTED_VERSIONS[ApiKey.PRODUCE] == (3, 8)
    assert SUPPORTED_VERSIONS[ApiKey.FETCH] == (4, 11)
    assert SUPPORTED_VERSIONS[ApiKey.API_VERSIONS] == (0, 2)
    assert is_supported(ApiKey.METADATA, 8)
    assert not is_supported(ApiKey.METADATA, 9)
    assert is_supported(ApiKey.SASL_HANDSHAKE, 1)
    assert not is_supported(ApiKey.SASL_AUTHENTICATE, 2)  # flexible
    assert not is_supported(999, 0)


def test_outside_declared_versions_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no version 12"):
        schema_for(ApiKey.PRODUCE, 12, "request")
    with pytest.raises(ValueError):
        encode_request(ApiKey.PRODUCE, 12, 1, None, {})
    with pytest.raises(ValueError):
        encode_request(ApiKey.SASL_HANDSHAKE, 2, 1, None, {})
