"""OffsetCommit (api key 8, versions 0-9) and OffsetFetch (api key 9, versions 0-9).

OffsetCommit: v1+ carries the member's generation and id (v1 alone a per-partition
commit timestamp), v2-4 a retention time, v6+ the committed leader epoch, v7+
the group instance id, v8+ is flexible, v9 is the same as v8 (the generation
field may carry a member epoch). OffsetFetch: v2+ accepts ``topics=None`` ("all
topics") and returns a top-level error code, v3+ throttle time, v5+ leader
epochs, v6+ is flexible, v7+ can require stable offsets, v8+ asks for several
``groups`` at once (the top-level group and topics go away), v9+ with the
member's id and epoch.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import BOOL, INT16, INT32, INT64, STRING
from log_engine.protocol.versions import ApiKey

_OFFSET_COMMIT_REQUEST_PARTITION = (
    Field("partition_index", INT32),
    Field("committed_offset", INT64),
    Field("committed_leader_epoch", INT32, versions=(6, None), default=-1),
    Field("commit_timestamp", INT64, versions=(1, 1), default=-1),
    Field("committed_metadata", STRING, nullable=ALL_VERSIONS),
)
_OFFSET_COMMIT_REQUEST_TOPIC = (
    Field("name", STRING),
    Field("partitions", Array(_OFFSET_COMMIT_REQUEST_PARTITION)),
)
OFFSET_COMMIT_REQUEST = Message(
    "OffsetCommitRequest",
    ApiKey.OFFSET_COMMIT,
    (0, 9),
    (
        Field("group_id", STRING),
        Field("generation_id_or_member_epoch", INT32, versions=(1, None), default=-1),
        Field("member_id", STRING, versions=(1, None)),
        Field("group_instance_id", STRING, versions=(7, None), nullable=(7, None), default=None),
        Field("retention_time_ms", INT64, versions=(2, 4), default=-1),
        Field("topics", Array(_OFFSET_COMMIT_REQUEST_TOPIC)),
    ),
    flexible=8,
)

_OFFSET_COMMIT_RESPONSE_PARTITION = (
    Field("partition_index", INT32),
    Field("error_code", INT16),
)
_OFFSET_COMMIT_RESPONSE_TOPIC = (
    Field("name", STRING),
    Field("partitions", Array(_OFFSET_COMMIT_RESPONSE_PARTITION)),
)
OFFSET_COMMIT_RESPONSE = Message(
    "OffsetCommitResponse",
    ApiKey.OFFSET_COMMIT,
    (0, 9),
    (
        Field("throttle_time_ms", INT32, versions=(3, None)),
        Field("topics", Array(_OFFSET_COMMIT_RESPONSE_TOPIC)),
    ),
    flexible=8,
)

_OFFSET_FETCH_REQUEST_TOPIC = (
    Field("name", STRING, versions=(0, 7)),
    Field("partition_indexes", Array(INT32), versions=(0, 7)),
)
_OFFSET_FETCH_REQUEST_GROUP_TOPIC = (
    Field("name", STRING, versions=(8, None)),
    Field("partition_indexes", Array(INT32), versions=(8, None)),
)
_OFFSET_FETCH_REQUEST_GROUP = (
    Field("group_id", STRING, versions=(8, None)),
    Field("member_id", STRING, versions=(9, None), nullable=(9, None), default=None),
    Field("member_epoch", INT32, versions=(9, None), default=-1),
    Field(
        "topics",
        Array(_OFFSET_FETCH_REQUEST_GROUP_TOPIC),
        versions=(8, None),
        nullable=(8, None),
    ),
)
OFFSET_FETCH_REQUEST = Message(
    "OffsetFetchRequest",
    ApiKey.OFFSET_FETCH,
    (0, 9),
    (
        Field("group_id", STRING, versions=(0, 7)),
        Field(
            "topics",
            Array(_OFFSET_FETCH_REQUEST_TOPIC),
            versions=(0, 7),
            nullable=(2, 7),
        ),
        Field("groups", Array(_OFFSET_FETCH_REQUEST_GROUP), versions=(8, None)),
        Field("require_stable", BOOL, versions=(7, None), default=False),
    ),
    flexible=6,
)

_OFFSET_FETCH_RESPONSE_PARTITION = (
    Field("partition_index", INT32, versions=(0, 7)),
    Field("committed_offset", INT64, versions=(0, 7)),
    Field("committed_leader_epoch", INT32, versions=(5, 7), default=-1),
    Field("metadata", STRING, versions=(0, 7), nullable=(0, 7)),
    Field("error_code", INT16, versions=(0, 7)),
)
_OFFSET_FETCH_RESPONSE_TOPIC = (
    Field("name", STRING, versions=(0, 7)),
    Field("partitions", Array(_OFFSET_FETCH_RESPONSE_PARTITION), versions=(0, 7)),
)
_OFFSET_FETCH_RESPONSE_GROUP_PARTITION = (
    Field("partition_index", INT32, versions=(8, None)),
    Field("committed_offset", INT64, versions=(8, None)),
    Field("committed_leader_epoch", INT32, versions=(8, None), default=-1),
    Field("metadata", STRING, versions=(8, None), nullable=(8, None)),
    Field("error_code", INT16, versions=(8, None)),
)
_OFFSET_FETCH_RESPONSE_GROUP_TOPIC = (
    Field("name", STRING, versions=(8, None)),
    Field("partitions", Array(_OFFSET_FETCH_RESPONSE_GROUP_PARTITION), versions=(8, None)),
)
_OFFSET_FETCH_RESPONSE_GROUP = (
    Field("group_id", STRING, versions=(8, None)),
    Field("topics", Array(_OFFSET_FETCH_RESPONSE_GROUP_TOPIC), versions=(8, None)),
    Field("error_code", INT16, versions=(8, None), default=0),
)
OFFSET_FETCH_RESPONSE = Message(
    "OffsetFetchResponse",
    ApiKey.OFFSET_FETCH,
    (0, 9),
    (
        Field("throttle_time_ms", INT32, versions=(3, None)),
        Field("topics", Array(_OFFSET_FETCH_RESPONSE_TOPIC), versions=(0, 7)),
        Field("error_code", INT16, versions=(2, 7), default=0),
        Field("groups", Array(_OFFSET_FETCH_RESPONSE_GROUP), versions=(8, None)),
    ),
    flexible=6,
)
