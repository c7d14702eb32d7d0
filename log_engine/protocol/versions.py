"""Api keys and two version tables: what the broker serves, what the client speaks.

:data:`SUPPORTED_VERSIONS` is what the Sluice *broker* serves and advertises
through ApiVersions: only non-flexible versions (no tagged fields, no compact
encodings: see DESIGN.md decision 1), and only versions that carry record batch
v2 where records appear (Produce 3+, Fetch 4+). ``decode_request`` refuses
versions outside it, the ApiVersions handler answers with
:func:`api_version_entries`, and the KIP-511 fallback advertises its
ApiVersions row.

:data:`CLIENT_VERSIONS` is what our *client* can send to any broker: up to the
newest versions in the reference specs (Kafka 4.x levels), flexible ones
included, because a Kafka-compatible broker may serve only those or serve old
ones badly (Kafka 4.0 dropped many old versions; Tansu 0.6.0 advertises
InitProducerId v0-5 but answers v0-2 with UNKNOWN_SERVER_ERROR). The client
picks, per API, the highest version in both this table and the broker's
ApiVersions answer, so against a Sluice broker it still speaks the classic
versions above. Where the client stops short of the newest spec version, the
row says why.

The message declarations (``apis/``) cover the union of the two tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType
from typing import Any


class ApiKey(IntEnum):
    """The request types Sluice knows, by their Kafka api key."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    INCREMENTAL_ALTER_CONFIGS = 44
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    ALTER_PARTITION = 56
    FETCH_SNAPSHOT = 59
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    ALLOCATE_PRODUCER_IDS = 67


SUPPORTED_VERSIONS: Mapping[ApiKey, tuple[int, int]] = MappingProxyType(
    {
        ApiKey.PRODUCE: (3, 8),
        ApiKey.FETCH: (4, 11),
        ApiKey.LIST_OFFSETS: (1, 5),
        ApiKey.METADATA: (0, 8),
        ApiKey.OFFSET_COMMIT: (2, 7),
        ApiKey.OFFSET_FETCH: (1, 5),
        # v3-4 are flexible (an exception to decision 1, as the SCRAM APIs below): v4
        # asks for a batch of coordinator keys (KIP-699), as Java clients and ours do
        ApiKey.FIND_COORDINATOR: (0, 4),
        ApiKey.JOIN_GROUP: (0, 5),
        ApiKey.HEARTBEAT: (0, 3),
        ApiKey.LEAVE_GROUP: (0, 3),
        ApiKey.SYNC_GROUP: (0, 3),
        ApiKey.DESCRIBE_GROUPS: (0, 4),
        ApiKey.LIST_GROUPS: (0, 2),
        ApiKey.API_VERSIONS: (0, 2),
        ApiKey.CREATE_TOPICS: (0, 4),
        ApiKey.DELETE_TOPICS: (0, 3),
        ApiKey.DELETE_RECORDS: (0, 1),
        ApiKey.INIT_PRODUCER_ID: (0, 1),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: (0, 3),
        ApiKey.DESCRIBE_CONFIGS: (0, 3),
        ApiKey.CREATE_PARTITIONS: (0, 1),
        ApiKey.DESCRIBE_LOG_DIRS: (0, 1),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 0),
        ApiKey.DESCRIBE_ACLS: (0, 1),
        ApiKey.CREATE_ACLS: (0, 1),
        ApiKey.DELETE_ACLS: (0, 1),
        ApiKey.SASL_HANDSHAKE: (0, 1),
        ApiKey.SASL_AUTHENTICATE: (0, 1),
        # KIP-554: only a flexible v0 exists (the exception to decision 1's
        # classic-only rule; our codec speaks flexible versions already)
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    }
)
"""Inclusive (min, max) per api key the broker serves."""

CLIENT_VERSIONS: Mapping[ApiKey, tuple[int, int]] = MappingProxyType(
    {
        ApiKey.PRODUCE: (3, 11),
        # v13+ names topics by id only: the fetcher sends it when Metadata v10+ gave
        # an id for every topic of the request, else v12 at most.
        ApiKey.FETCH: (4, 17),
        ApiKey.LIST_OFFSETS: (1, 10),
        ApiKey.METADATA: (0, 12),
        ApiKey.OFFSET_COMMIT: (2, 9),
        ApiKey.OFFSET_FETCH: (1, 9),
        ApiKey.FIND_COORDINATOR: (0, 6),
        ApiKey.JOIN_GROUP: (0, 9),
        ApiKey.HEARTBEAT: (0, 4),
        ApiKey.LEAVE_GROUP: (0, 5),
        ApiKey.SYNC_GROUP: (0, 5),
        ApiKey.DESCRIBE_GROUPS: (0, 5),
        ApiKey.LIST_GROUPS: (0, 5),
        ApiKey.API_VERSIONS: (0, 4),
        ApiKey.CREATE_TOPICS: (0, 7),
        ApiKey.DELETE_TOPICS: (0, 6),
        ApiKey.DELETE_RECORDS: (0, 2),
        ApiKey.INIT_PRODUCER_ID: (0, 5),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: (0, 4),
        ApiKey.DESCRIBE_CONFIGS: (0, 4),
        ApiKey.CREATE_PARTITIONS: (0, 3),
        ApiKey.DESCRIBE_LOG_DIRS: (0, 4),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
        # v0 has no pattern type (every binding LITERAL): PREFIXED needs v1
        ApiKey.DESCRIBE_ACLS: (1, 3),
        ApiKey.CREATE_ACLS: (1, 3),
        ApiKey.DELETE_ACLS: (1, 3),
        ApiKey.SASL_HANDSHAKE: (1, 1),
        ApiKey.SASL_AUTHENTICATE: (0, 2),
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    }
)
"""Inclusive (min, max) per api key our client can send (and read the answer of)."""

CONTROLLER_VERSIONS: Mapping[ApiKey, tuple[int, int]] = MappingProxyType(
    {
        ApiKey.FETCH: (12, 17),
        ApiKey.API_VERSIONS: (0, 2),
        ApiKey.VOTE: (0, 2),
        ApiKey.BEGIN_QUORUM_EPOCH: (0, 1),
        ApiKey.END_QUORUM_EPOCH: (0, 1),
        ApiKey.DESCRIBE_QUORUM: (0, 2),
        ApiKey.ALTER_PARTITION: (0, 3),
        ApiKey.FETCH_SNAPSHOT: (0, 1),
        ApiKey.BROKER_REGISTRATION: (0, 4),
        ApiKey.BROKER_HEARTBEAT: (0, 1),
        ApiKey.ALLOCATE_PRODUCER_IDS: (0, 0),
        ApiKey.SASL_HANDSHAKE: (0, 1),  # a SASL controller listener (docs/security.md)
        ApiKey.SASL_AUTHENTICATE: (0, 1),
        ApiKey.CREATE_TOPICS: (0, 4),
        ApiKey.DELETE_TOPICS: (0, 3),
        ApiKey.CREATE_PARTITIONS: (0, 1),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 0),
        ApiKey.CREATE_ACLS: (1, 1),
        ApiKey.DELETE_ACLS: (1, 1),
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    }
)
"""What the controller listener serves (Kafka's ``"listeners": ["controller"]``
APIs): the KRaft quorum APIs (Fetch only on ``__cluster_metadata``) and the
brokers' calls to the active controller (registration, heartbeats,
AlterPartition, producer-id blocks), and CreateTopics / DeleteTopics /
CreatePartitions / IncrementalAlterConfigs / CreateAcls / DeleteAcls /
AlterUserScramCredentials that brokers forward for
their clients (the client listener's versions). Flexible versions: decision 1's
classic-only rule is about the client-facing listener; the controller listener
is spoken by Sluice nodes, which send these APIs at fixed versions (not through
:data:`CLIENT_VERSIONS`)."""


def api_version_entries(
    served: Mapping[ApiKey, tuple[int, int]] = SUPPORTED_VERSIONS,
) -> list[dict[str, Any]]:
    """The ``api_keys`` list of an ApiVersions response (default: :data:`SUPPORTED_VERSIONS`)."""
    return [
        {"api_key": int(key), "min_version": lo, "max_version": hi}
        for key, (lo, hi) in sorted(served.items())
    ]


def is_supported(api_key: int, api_version: int) -> bool:
    """Whether the broker serves ``api_key`` at ``api_version``."""
    bounds = SUPPORTED_VERSIONS.get(api_key)  # type: ignore[call-overload]
    return bounds is not None and bounds[0] <= api_version <= bounds[1]
