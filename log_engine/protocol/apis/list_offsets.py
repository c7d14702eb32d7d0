"""ListOffsets (api key 2), versions 0-10: the offset for a timestamp per partition.

``timestamp`` -1 asks for the log end (latest), -2 for the log start (earliest).
v0 returns a list of offsets (``max_num_offsets`` / ``old_style_offsets``); v1+
one offset and its timestamp. v2+ adds the isolation level and throttle time,
v4+ leader epochs (the request's for fencing, the response's of the offset).
v6+ is flexible; v7-9 add only timestamp kinds (max timestamp, tiered storage);
v10+ carries a timeout for offsets kept in remote storage.
"""

from __future__ import annotations

from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import INT8, INT16, INT32, INT64, STRING
from log_engine.protocol.versions import ApiKey

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2

_LIST_OFFSETS_PARTITION = (
    Field("partition_index", INT32),
    Field("current_leader_epoch", INT32, versions=(4, None), default=-1),
    Field("timestamp", INT64),
    Field("max_num_offsets", INT32, versions=(0, 0), default=1),
)
_LIST_OFFSETS_TOPIC = (
    Field("name", STRING),
    Field("partitions", Array(_LIST_OFFSETS_PARTITION)),
)
LIST_OFFSETS_REQUEST = Message(
    "ListOffsetsRequest",
    ApiKey.LIST_OFFSETS,
    (0, 10),
    (
        # The spec gives no default; 0 would claim to be broker 0, so default to
        # -1 ("a consumer"), as Fetch's spec does.
        Field("replica_id", INT32, default=-1),
        Field("isolation_level", INT8, versions=(2, None)),
        Field("topics", Array(_LIST_OFFSETS_TOPIC)),
        # No spec default either: a zero timeout would fail every remote lookup.
        Field("timeout_ms", INT32, versions=(10, None), default=30000),
    ),
    flexible=6,
)

_LIST_OFFSETS_PARTITION_RESPONSE = (
    Field("partition_index", INT32),
    Field("error_code", INT16),
    Field("old_style_offsets", Array(INT64), versions=(0, 0)),
    Field("timestamp", INT64, versions=(1, None), default=-1),
    Field("offset", INT64, versions=(1, None), default=-1),
    Field("leader_epoch", INT32, versions=(4, None), default=-1),
)
_LIST_OFFSETS_TOPIC_RESPONSE = (
    Field("name", STRING),
    Field("partitions", Array(_LIST_OFFSETS_PARTITION_RESPONSE)),
)
LIST_OFFSETS_RESPONSE = Message(
    "ListOffsetsResponse",
    ApiKey.LIST_OFFSETS,
    (0, 10),
    (
        Field("throttle_time_ms", INT32, versions=(2, None)),
        Field("topics", Array(_LIST_OFFSETS_TOPIC_RESPONSE)),
    ),
    flexible=6,
)
