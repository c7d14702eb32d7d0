"""Metadata (api key 3), versions 0-12: brokers, topics, partitions and leaders.

Request ``topics``: in v0 an empty list means all topics; in v1+ null means all
topics and an empty list none. v4+ says whether the broker may auto-create the
topics asked for; v8+ asks for authorized-operations bitfields; v9+ is
flexible; v10+ may name a topic by id (name null from v10).

Response: v1+ adds the broker rack, the controller id and ``is_internal``; v2+
the cluster id; v3+ throttle time; v5+ offline replicas; v7+ leader epochs; v8+
authorized operations (default ``-2**31``: "not requested"); v10+ topic ids;
v11+ drops the cluster's authorized operations; v12+ a topic's name may be null.
"""

from __future__ import annotations

from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import BOOL, INT16, INT32, STRING, UUID
from log_engine.protocol.versions import ApiKey

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
"""The authorized-operations value meaning "not requested / not computed"."""

_METADATA_REQUEST_TOPIC = (
    Field("topic_id", UUID, versions=(10, None)),
    Field("name", STRING, nullable=(10, None)),
)
METADATA_REQUEST = Message(
    "MetadataRequest",
    ApiKey.METADATA,
    (0, 12),
    (
        Field("topics", Array(_METADATA_REQUEST_TOPIC), nullable=(1, None)),
        Field("allow_auto_topic_creation", BOOL, versions=(4, None), default=True),
        Field("include_cluster_authorized_operations", BOOL, versions=(8, 10)),
        Field("include_topic_authorized_operations", BOOL, versions=(8, None)),
    ),
    flexible=9,
)

_METADATA_RESPONSE_BROKER = (
    Field("node_id", INT32),
    Field("host", STRING),
    Field("port", INT32),
    Field("rack", STRING, versions=(1, None), nullable=(1, None), default=None),
)
_METADATA_RESPONSE_PARTITION = (
    Field("error_code", INT16),
    Field("partition_index", INT32),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32, versions=(7, None), default=-1),
    Field("replica_nodes", Array(INT32)),
    Field("isr_nodes", Array(INT32)),
    Field("offline_replicas", Array(INT32), versions=(5, None)),
)
_METADATA_RESPONSE_TOPIC = (
    Field("error_code", INT16),
    Field("name", STRING, nullable=(12, None)),
    Field("topic_id", UUID, versions=(10, None)),
    Field("is_internal", BOOL, versions=(1, None), default=False),
    Field("partitions", Array(_METADATA_RESPONSE_PARTITION)),
    Field(
        "topic_authorized_operations",
        INT32,
        versions=(8, None),
        default=AUTHORIZED_OPERATIONS_OMITTED,
    ),
)
METADATA_RESPONSE = Message(
    "MetadataResponse",
    ApiKey.METADATA,
    (0, 12),
    (
        Field("throttle_time_ms", INT32, versions=(3, None)),
        Field("brokers", Array(_METADATA_RESPONSE_BROKER)),
        Field("cluster_id", STRING, versions=(2, None), nullable=(2, None), default=None),
        Field("controller_id", INT32, versions=(1, None), default=-1),
        Field("topics", Array(_METADATA_RESPONSE_TOPIC)),
        Field(
            "cluster_authorized_operations",
            INT32,
            versions=(8, 10),
            default=AUTHORIZED_OPERATIONS_OMITTED,
        ),
    ),
    flexible=9,
)
