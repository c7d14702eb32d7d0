"""The classic group protocol: FindCoordinator (10), JoinGroup (11), Heartbeat (12),
LeaveGroup (13), SyncGroup (14), DescribeGroups (15), ListGroups (16).

Versions: FindCoordinator 0-6 (v1+ key type: 0 group, 1 transaction; v3+
flexible; v4+ a batch of ``coordinator_keys`` answered by ``coordinators``),
JoinGroup 0-9 (v1+ rebalance timeout, v5+ static membership via
``group_instance_id``, v6+ flexible, v7+ protocol type in the response, v8+ a
reason, v9+ ``skip_assignment``), Heartbeat 0-4 and SyncGroup 0-5 (v3+ group
instance id, v4+ flexible, SyncGroup v5+ protocol type and name), LeaveGroup
0-5 (v3+ leaves a batch of ``members`` instead of one ``member_id``, v4+
flexible, v5+ a reason per member), DescribeGroups 0-5 (v3+ authorized
operations, v4+ group instance ids, v5+ flexible), ListGroups 0-5 (v3+
flexible, v4+ state filter and states, v5+ type filter and types). Member
metadata and assignments are opaque bytes here (the consumer protocol lives in
clients).
"""

from __future__ import annotations

from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import BOOL, BYTES, INT8, INT16, INT32, STRING
from log_engine.protocol.versions import ApiKey

_GROUP_INSTANCE_ID_V3 = Field(
    "group_instance_id", STRING, versions=(3, None), nullable=(3, None), default=None
)
_GROUP_INSTANCE_ID_V5 = Field(
    "group_instance_id", STRING, versions=(5, None), nullable=(5, None), default=None
)
_THROTTLE_TIME_V1 = Field("throttle_time_ms", INT32, versions=(1, None))
_PROTOCOL_TYPE_V5 = Field(
    "protocol_type", STRING, versions=(5, None), nullable=(5, None), default=None
)
_PROTOCOL_NAME_V5 = Field(
    "protocol_name", STRING, versions=(5, None), nullable=(5, None), default=None
)

FIND_COORDINATOR_REQUEST = Message(
    "FindCoordinatorRequest",
    ApiKey.FIND_COORDINATOR,
    (0, 6),
    (
        Field("key", STRING, versions=(0, 3)),
        Field("key_type", INT8, versions=(1, None), default=0),
        Field("coordinator_keys", Array(STRING), versions=(4, None)),
    ),
    flexible=3,
)
_COORDINATOR = (
    Field("key", STRING, versions=(4, None)),
    Field("node_id", INT32, versions=(4, None)),
    Field("host", STRING, versions=(4, None)),
    Field("port", INT32, versions=(4, None)),
    Field("error_code", INT16, versions=(4, None)),
    Field("error_message", STRING, versions=(4, None), nullable=(4, None)),
)
FIND_COORDINATOR_RESPONSE = Message(
    "FindCoordinatorResponse",
    ApiKey.FIND_COORDINATOR,
    (0, 6),
    (
        _THROTTLE_TIME_V1,
        Field("error_code", INT16, versions=(0, 3)),
        Field("error_message", STRING, versions=(1, 3), nullable=(1, 3)),
        Field("node_id", INT32, versions=(0, 3)),
        Field("host", STRING, versions=(0, 3)),
        Field("port", INT32, versions=(0, 3)),
        Field("coordinators", Array(_COORDINATOR), versions=(4, None)),
    ),
    flexible=3,
)

_JOIN_GROUP_REQUEST_PROTOCOL = (
    Field("name", STRING),
    Field("metadata", BYTES),
)
JOIN_GROUP_REQUEST = Message(
    "JoinGroupRequest",
    ApiKey.JOIN_GROUP,
    (0, 9),
    (
        Field("group_id", STRING),
        Field("session_timeout_ms", INT32),
        Field("rebalance_timeout_ms", INT32, versions=(1, None), default=-1),
        Field("member_id", STRING),
        _GROUP_INSTANCE_ID_V5,
        Field("protocol_type", STRING),
        Field("protocols", Array(_JOIN_GROUP_REQUEST_PROTOCOL)),
        Field("reason", STRING, versions=(8, None), nullable=(8, None), default=None),
    ),
    flexible=6,
)
_JOIN_GROUP_RESPONSE_MEMBER = (
    Field("member_id", STRING),
    _GROUP_INSTANCE_ID_V5,
    Field("metadata", BYTES),
)
JOIN_GROUP_RESPONSE = Message(
    "JoinGroupResponse",
    ApiKey.JOIN_GROUP,
    (0, 9),
    (
        Field("throttle_time_ms", INT32, versions=(2, None)),
        Field("error_code", INT16),
        Field("generation_id", INT32, default=-1),
        Field("protocol_type", STRING, versions=(7, None), nullable=(7, None), default=None),
        Field("protocol_name", STRING, nullable=(7, None)),
        Field("leader", STRING),
        Field("skip_assignment", BOOL, versions=(9, None), default=False),
        Field("member_id", STRING),
        Field("members", Array(_JOIN_GROUP_RESPONSE_MEMBER)),
    ),
    flexible=6,
)

HEARTBEAT_REQUEST = Message(
    "HeartbeatRequest",
    ApiKey.HEARTBEAT,
    (0, 4),
    (
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        _GROUP_INSTANCE_ID_V3,
    ),
    flexible=4,
)
HEARTBEAT_RESPONSE = Message(
    "HeartbeatResponse",
    ApiKey.HEARTBEAT,
    (0, 4),
    (_THROTTLE_TIME_V1, Field("error_code", INT16)),
    flexible=4,
)

_MEMBER_IDENTITY = (
    Field("member_id", STRING, versions=(3, None)),
    _GROUP_INSTANCE_ID_V3,
    Field("reason", STRING, versions=(5, None), nullable=(5, None), default=None),
)
LEAVE_GROUP_REQUEST = Message(
    "LeaveGroupRequest",
    ApiKey.LEAVE_GROUP,
    (0, 5),
    (
        Field("group_id", STRING),
        Field("member_id", STRING, versions=(0, 2)),
        Field("members", Array(_MEMBER_IDENTITY), versions=(3, None)),
    ),
    flexible=4,
)
_MEMBER_RESPONSE = (
    Field("member_id", STRING, versions=(3, None)),
    Field("group_instance_id", STRING, versions=(3, None), nullable=(3, None)),
    Field("error_code", INT16, versions=(3, None)),
)
LEAVE_GROUP_RESPONSE = Message(
    "LeaveGroupResponse",
    ApiKey.LEAVE_GROUP,
    (0, 5),
    (
        _THROTTLE_TIME_V1,
        Field("error_code", INT16),
        Field("members", Array(_MEMBER_RESPONSE), versions=(3, None)),
    ),
    flexible=4,
)

_SYNC_GROUP_REQUEST_ASSIGNMENT = (
    Field("member_id", STRING),
    Field("assignment", BYTES),
)
SYNC_GROUP_REQUEST = Message(
    "SyncGroupRequest",
    ApiKey.SYNC_GROUP,
    (0, 5),
    (
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        _GROUP_INSTANCE_ID_V3,
        _PROTOCOL_TYPE_V5,
        _PROTOCOL_NAME_V5,
        Field("assignments", Array(_SYNC_GROUP_REQUEST_ASSIGNMENT)),
    ),
    flexible=4,
)
SYNC_GROUP_RESPONSE = Message(
    "SyncGroupResponse",
    ApiKey.SYNC_GROUP,
    (0, 5),
    (
        _THROTTLE_TIME_V1,
        Field("error_code", INT16),
        _PROTOCOL_TYPE_V5,
        _PROTOCOL_NAME_V5,
        Field("assignment", BYTES),
    ),
    flexible=4,
)

DESCRIBE_GROUPS_REQUEST = Message(
    "DescribeGroupsRequest",
    ApiKey.DESCRIBE_GROUPS,
    (0, 5),
    (
        Field("groups", Array(STRING)),
        Field("include_authorized_operations", BOOL, versions=(3, None)),
    ),
    flexible=5,
)
_DESCRIBED_GROUP_MEMBER = (
    Field("member_id", STRING),
    Field("group_instance_id", STRING, versions=(4, None), nullable=(4, None), default=None),
    Field("client_id", STRING),
    Field("client_host", STRING),
    Field("member_metadata", BYTES),
    Field("member_assignment", BYTES),
)
_DESCRIBED_GROUP = (
    Field("error_code", INT16),
    Field("group_id", STRING),
    Field("group_state", STRING),
    Field("protocol_type", STRING),
    Field("protocol_data", STRING),
    Field("members", Array(_DESCRIBED_GROUP_MEMBER)),
    Field("authorized_operations", INT32, versions=(3, None), default=-(2**31)),
)
DESCRIBE_GROUPS_RESPONSE = Message(
    "DescribeGroupsResponse",
    ApiKey.DESCRIBE_GROUPS,
    (0, 5),
    (_THROTTLE_TIME_V1, Field("groups", Array(_DESCRIBED_GROUP))),
    flexible=5,
)

LIST_GROUPS_REQUEST = Message(
    "ListGroupsRequest",
    ApiKey.LIST_GROUPS,
    (0, 5),
    (
        Field("states_filter", Array(STRING), versions=(4, None)),
        Field("types_filter", Array(STRING), versions=(5, None)),
    ),
    flexible=3,
)
_LISTED_GROUP = (
    Field("group_id", STRING),
    Field("protocol_type", STRING),
    Field("group_state", STRING, versions=(4, None)),
    Field("group_type", STRING, versions=(5, None)),
)
LIST_GROUPS_RESPONSE = Message(
    "ListGroupsResponse",
    ApiKey.LIST_GROUPS,
    (0, 5),
    (
        _THROTTLE_TIME_V1,
        Field("error_code", INT16),
        Field("groups", Array(_LISTED_GROUP)),
    ),
    flexible=3,
)
