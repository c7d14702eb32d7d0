"""The message declarations, one module per API family, and their registry.

``REQUESTS`` / ``RESPONSES`` map each api key to its :class:`Message`;
:func:`schema_for` returns the compiled schema of one version.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from log_engine.protocol.apis.acls import ACL_PAIRS
from log_engine.protocol.apis.admin import (
    CREATE_PARTITIONS_REQUEST,
    CREATE_PARTITIONS_RESPONSE,
    CREATE_TOPICS_REQUEST,
    CREATE_TOPICS_RESPONSE,
    DELETE_RECORDS_REQUEST,
    DELETE_RECORDS_RESPONSE,
    DELETE_TOPICS_REQUEST,
    DELETE_TOPICS_RESPONSE,
    DESCRIBE_CONFIGS_REQUEST,
    DESCRIBE_CONFIGS_RESPONSE,
    INCREMENTAL_ALTER_CONFIGS_REQUEST,
    INCREMENTAL_ALTER_CONFIGS_RESPONSE,
)
from log_engine.protocol.apis.api_versions import API_VERSIONS_REQUEST, API_VERSIONS_RESPONSE
from log_engine.protocol.apis.controller_apis import CONTROLLER_API_PAIRS
from log_engine.protocol.apis.fetch import FETCH_REQUEST, FETCH_RESPONSE
from log_engine.protocol.apis.group import (
    DESCRIBE_GROUPS_REQUEST,
    DESCRIBE_GROUPS_RESPONSE,
    FIND_COORDINATOR_REQUEST,
    FIND_COORDINATOR_RESPONSE,
    HEARTBEAT_REQUEST,
    HEARTBEAT_RESPONSE,
    JOIN_GROUP_REQUEST,
    JOIN_GROUP_RESPONSE,
    LEAVE_GROUP_REQUEST,
    LEAVE_GROUP_RESPONSE,
    LIST_GROUPS_REQUEST,
    LIST_GROUPS_RESPONSE,
    SYNC_GROUP_REQUEST,
    SYNC_GROUP_RESPONSE,
)
from log_engine.protocol.apis.init_producer_id import (
    INIT_PRODUCER_ID_REQUEST,
    INIT_PRODUCER_ID_RESPONSE,
)
from log_engine.protocol.apis.list_offsets import LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE
from log_engine.protocol.apis.log_dirs import (
    DESCRIBE_LOG_DIRS_REQUEST,
    DESCRIBE_LOG_DIRS_RESPONSE,
)
from log_engine.protocol.apis.metadata import METADATA_REQUEST, METADATA_RESPONSE
from log_engine.protocol.apis.offset_for_leader_epoch import (
    OFFSET_FOR_LEADER_EPOCH_REQUEST,
    OFFSET_FOR_LEADER_EPOCH_RESPONSE,
)
from log_engine.protocol.apis.offsets import (
    OFFSET_COMMIT_REQUEST,
    OFFSET_COMMIT_RESPONSE,
    OFFSET_FETCH_REQUEST,
    OFFSET_FETCH_RESPONSE,
)
from log_engine.protocol.apis.produce import PRODUCE_REQUEST, PRODUCE_RESPONSE
from log_engine.protocol.apis.quorum import QUORUM_PAIRS
from log_engine.protocol.apis.sasl import (
    SASL_AUTHENTICATE_REQUEST,
    SASL_AUTHENTICATE_RESPONSE,
    SASL_HANDSHAKE_REQUEST,
    SASL_HANDSHAKE_RESPONSE,
)
from log_engine.protocol.apis.scram_credentials import (
    ALTER_USER_SCRAM_CREDENTIALS_REQUEST,
    ALTER_USER_SCRAM_CREDENTIALS_RESPONSE,
    DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST,
    DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE,
)
from log_engine.protocol.schema import CompiledStruct, Message
from log_engine.protocol.versions import ApiKey

Kind = Literal["request", "response"]

_PAIRS = (
    *QUORUM_PAIRS,
    (PRODUCE_REQUEST, PRODUCE_RESPONSE),
    (FETCH_REQUEST, FETCH_RESPONSE),
    (LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE),
    (METADATA_REQUEST, METADATA_RESPONSE),
    (OFFSET_COMMIT_REQUEST, OFFSET_COMMIT_RESPONSE),
    (OFFSET_FETCH_REQUEST, OFFSET_FETCH_RESPONSE),
    (FIND_COORDINATOR_REQUEST, FIND_COORDINATOR_RESPONSE),
    (JOIN_GROUP_REQUEST, JOIN_GROUP_RESPONSE),
    (HEARTBEAT_REQUEST, HEARTBEAT_RESPONSE),
    (LEAVE_GROUP_REQUEST, LEAVE_GROUP_RESPONSE),
    (SYNC_GROUP_REQUEST, SYNC_GROUP_RESPONSE),
    (DESCRIBE_GROUPS_REQUEST, DESCRIBE_GROUPS_RESPONSE),
    (LIST_GROUPS_REQUEST, LIST_GROUPS_RESPONSE),
    (API_VERSIONS_REQUEST, API_VERSIONS_RESPONSE),
    (CREATE_TOPICS_REQUEST, CREATE_TOPICS_RESPONSE),
    (DELETE_TOPICS_REQUEST, DELETE_TOPICS_RESPONSE),
    (DELETE_RECORDS_REQUEST, DELETE_RECORDS_RESPONSE),
    (INIT_PRODUCER_ID_REQUEST, INIT_PRODUCER_ID_RESPONSE),
    (DESCRIBE_CONFIGS_REQUEST, DESCRIBE_CONFIGS_RESPONSE),
    *ACL_PAIRS,
    (CREATE_PARTITIONS_REQUEST, CREATE_PARTITIONS_RESPONSE),
    (DESCRIBE_LOG_DIRS_REQUEST, DESCRIBE_LOG_DIRS_RESPONSE),
    (INCREMENTAL_ALTER_CONFIGS_REQUEST, INCREMENTAL_ALTER_CONFIGS_RESPONSE),
    *CONTROLLER_API_PAIRS,
    (OFFSET_FOR_LEADER_EPOCH_REQUEST, OFFSET_FOR_LEADER_EPOCH_RESPONSE),
    (SASL_HANDSHAKE_REQUEST, SASL_HANDSHAKE_RESPONSE),
    (SASL_AUTHENTICATE_REQUEST, SASL_AUTHENTICATE_RESPONSE),
    (DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST, DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE),
    (ALTER_USER_SCRAM_CREDENTIALS_REQUEST, ALTER_USER_SCRAM_CREDENTIALS_RESPONSE),
)

REQUESTS: Mapping[ApiKey, Message] = MappingProxyType(
    {ApiKey(req.api_key): req for req, _ in _PAIRS}
)
RESPONSES: Mapping[ApiKey, Message] = MappingProxyType(
    {ApiKey(resp.api_key): resp for _, resp in _PAIRS}
)


def schema_for(api_key: int, version: int, kind: Kind) -> CompiledStruct:
    """The compiled body schema of ``api_key`` at ``version``.

    ``KeyError`` for an api with no declaration, ``ValueError`` for a version
    outside the declared range.
    """
    table = REQUESTS if kind == "request" else RESPONSES
    return table[api_key].schema(version)  # type: ignore[index]
