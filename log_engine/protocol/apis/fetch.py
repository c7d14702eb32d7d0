"""Fetch (api key 1), versions 0-17: read record batches from partitions.

Consumers send ``replica_id=-1``; followers send their broker id. v3+ caps the
whole response (``max_bytes``), v4+ adds the isolation level, v5+ log start
offsets, v7+ incremental fetch sessions (``session_id``, ``session_epoch``,
``forgotten_topics_data``), v9+ the current leader epoch per partition, v11+ the
consumer's rack, v12+ is flexible (and sends the last fetched epoch), v13+
names topics by ``topic_id`` instead of by name, v15+ moves the replica id into
a tagged field (``replica_state``). The response's tagged diverging epoch,
current leader and snapshot id (KRaft's fetch from ``__cluster_metadata``,
KIP-595) are read and written; node endpoints are skipped when read.

The response's ``records`` per partition are whole stored batches: when
encoding, the broker passes bytes or a list of ``bytes | FileSlice`` pieces and
they become separate chunks of the frame (for ``sendfile``), never copied.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message, Struct
from log_engine.protocol.types import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID
from log_engine.protocol.versions import ApiKey

_FETCH_PARTITION = (
    Field("partition", INT32),
    Field("current_leader_epoch", INT32, versions=(9, None), default=-1),
    Field("fetch_offset", INT64),
    Field("last_fetched_epoch", INT32, versions=(12, None), default=-1),
    Field("log_start_offset", INT64, versions=(5, None), default=-1),
    Field("partition_max_bytes", INT32),
)
_FETCH_TOPIC = (
    Field("topic", STRING, versions=(0, 12)),
    Field("topic_id", UUID, versions=(13, None)),
    Field("partitions", Array(_FETCH_PARTITION)),
)
_FORGOTTEN_TOPIC = (
    Field("topic", STRING, versions=(7, 12)),
    Field("topic_id", UUID, versions=(13, None)),
    Field("partitions", Array(INT32), versions=(7, None)),
)
FETCH_REQUEST = Message(
    "FetchRequest",
    ApiKey.FETCH,
    (0, 17),
    (
        Field("cluster_id", STRING, versions=(12, None), nullable=(12, None), default=None, tag=0),
        Field("replica_id", INT32, versions=(0, 14), default=-1),
        Field(
            "replica_state",
            Struct(
                (Field("replica_id", INT32, default=-1), Field("replica_epoch", INT64, default=-1))
            ),
            versions=(15, None),
            tag=1,
        ),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, versions=(3, None), default=0x7FFFFFFF),
        Field("isolation_level", INT8, versions=(4, None), default=0),
        Field("session_id", INT32, versions=(7, None), default=0),
        Field("session_epoch", INT32, versions=(7, None), default=-1),
        Field("topics", Array(_FETCH_TOPIC)),
        Field("forgotten_topics_data", Array(_FORGOTTEN_TOPIC), versions=(7, None)),
        Field("rack_id", STRING, versions=(11, None), default=""),
    ),
    flexible=12,
)

_EPOCH_END_OFFSET = (
    Field("epoch", INT32, default=-1),
    Field("end_offset", INT64, default=-1),
)
_LEADER_ID_AND_EPOCH = (
    Field("leader_id", INT32, default=-1),
    Field("leader_epoch", INT32, default=-1),
)
_SNAPSHOT_ID = (
    Field("end_offset", INT64, default=-1),
    Field("epoch", INT32, default=-1),
)
_ABORTED_TRANSACTION = (
    Field("producer_id", INT64, versions=(4, None)),
    Field("first_offset", INT64, versions=(4, None)),
)
_PARTITION_DATA = (
    Field("partition_index", INT32),
    Field("error_code", INT16),
    Field("high_watermark", INT64),
    Field("last_stable_offset", INT64, versions=(4, None), default=-1),
    Field("log_start_offset", INT64, versions=(5, None), default=-1),
    Field("diverging_epoch", Struct(_EPOCH_END_OFFSET), versions=(12, None), tag=0),
    Field("current_leader", Struct(_LEADER_ID_AND_EPOCH), versions=(12, None), tag=1),
    Field("snapshot_id", Struct(_SNAPSHOT_ID), versions=(12, None), tag=2),
    Field(
        "aborted_transactions",
        Array(_ABORTED_TRANSACTION),
        versions=(4, None),
        nullable=(4, None),
    ),
    Field("preferred_read_replica", INT32, versions=(11, None), default=-1),
    Field("records", RECORDS, nullable=ALL_VERSIONS),
)
_FETCHABLE_TOPIC_RESPONSE = (
    Field("topic", STRING, versions=(0, 12)),
    Field("topic_id", UUID, versions=(13, None)),
    Field("partitions", Array(_PARTITION_DATA)),
)
FETCH_RESPONSE = Message(
    "FetchResponse",
    ApiKey.FETCH,
    (0, 17),
    (
        Field("throttle_time_ms", INT32, versions=(1, None)),
        Field("error_code", INT16, versions=(7, None)),
        Field("session_id", INT32, versions=(7, None), default=0),
        Field("responses", Array(_FETCHABLE_TOPIC_RESPONSE)),
    ),
    flexible=12,
)
