"""The KRaft quorum APIs (KIP-595, KIP-630, KIP-836, KIP-853, KIP-996), served on the
controller listener only.

- Vote (52), v0-2, flexible from v0: a candidate (or, v2+, a prospective asking a
  pre-vote) asks for a vote; v1 adds the receiving voter's id and directory ids.
- BeginQuorumEpoch (53), v0-1, flexible from v1: a new leader announces its epoch.
- EndQuorumEpoch (54), v0-1, flexible from v1: a resigning leader names its
  preferred successors (v0) or candidates (v1).
- DescribeQuorum (55), v0-2, flexible from v0: the leader's view of the quorum
  (high watermark, each replica's log end offset); v1 adds fetch and caught-up
  timestamps, v2 error messages, directory ids and the voters' listeners.
- FetchSnapshot (59), v0-1, flexible from v0: a chunk of a snapshot.

Every request and response names a topic (``__cluster_metadata``) and a
partition (0) as Kafka's do. Endpoint lists of KIP-853 (dynamic quorums) that are
tagged are skipped when read; the ones that are not are declared so the bodies parse.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message, Struct
from log_engine.protocol.types import BOOL, INT16, INT32, INT64, RECORDS, STRING, UINT16, UUID
from log_engine.protocol.versions import ApiKey

_LEADER_ENDPOINT = (
    Field("name", STRING),
    Field("host", STRING),
    Field("port", UINT16),
)

# ---- Vote (52) -------------------------------------------------------------------

_VOTE_PARTITION = (
    Field("partition_index", INT32),
    Field("candidate_epoch", INT32),
    Field("candidate_id", INT32),
    Field("candidate_directory_id", UUID, versions=(1, None)),
    Field("voter_directory_id", UUID, versions=(1, None)),
    Field("last_offset_epoch", INT32),
    Field("last_offset", INT64),
    Field("pre_vote", BOOL, versions=(2, None)),
)
VOTE_REQUEST = Message(
    "VoteRequest",
    ApiKey.VOTE,
    (0, 2),
    (
        Field("cluster_id", STRING, nullable=ALL_VERSIONS, default=None),
        Field("voter_id", INT32, versions=(1, None), default=-1),
        Field(
            "topics",
            Array((Field("topic_name", STRING), Field("partitions", Array(_VOTE_PARTITION)))),
        ),
    ),
    flexible=0,
)
_VOTE_PARTITION_RESPONSE = (
    Field("partition_index", INT32),
    Field("error_code", INT16),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32),
    Field("vote_granted", BOOL),
)
VOTE_RESPONSE = Message(
    "VoteResponse",
    ApiKey.VOTE,
    (0, 2),
    (
        Field("error_code", INT16),
        Field(
            "topics",
            Array(
                (
                    Field("topic_name", STRING),
                    Field("partitions", Array(_VOTE_PARTITION_RESPONSE)),
                )
            ),
        ),
    ),
    flexible=0,
)

# ---- BeginQuorumEpoch (53) -------------------------------------------------------

_BEGIN_PARTITION = (
    Field("partition_index", INT32),
    Field("voter_directory_id", UUID, versions=(1, None)),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32),
)
BEGIN_QUORUM_EPOCH_REQUEST = Message(
    "BeginQuorumEpochRequest",
    ApiKey.BEGIN_QUORUM_EPOCH,
    (0, 1),
    (
        Field("cluster_id", STRING, nullable=ALL_VERSIONS, default=None),
        Field("voter_id", INT32, versions=(1, None), default=-1),
        Field(
            "topics",
            Array((Field("topic_name", STRING), Field("partitions", Array(_BEGIN_PARTITION)))),
        ),
        Field("leader_endpoints", Array(_LEADER_ENDPOINT), versions=(1, None)),
    ),
    flexible=1,
)
_EPOCH_PARTITION_RESPONSE = (
    Field("partition_index", INT32),
    Field("error_code", INT16),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32),
)
_EPOCH_TOPIC_RESPONSE = (
    Field("topic_name", STRING),
    Field("partitions", Array(_EPOCH_PARTITION_RESPONSE)),
)
BEGIN_QUORUM_EPOCH_RESPONSE = Message(
    "BeginQuorumEpochResponse",
    ApiKey.BEGIN_QUORUM_EPOCH,
    (0, 1),
    (Field("error_code", INT16), Field("topics", Array(_EPOCH_TOPIC_RESPONSE))),
    flexible=1,
)

# ---- EndQuorumEpoch (54) ---------------------------------------------------------

_END_PARTITION = (
    Field("partition_index", INT32),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32),
    Field("preferred_successors", Array(INT32), versions=(0, 0)),
    Field(
        "preferred_candidates",
        Array((Field("candidate_id", INT32), Field("candidate_directory_id", UUID))),
        versions=(1, None),
    ),
)
END_QUORUM_EPOCH_REQUEST = Message(
    "EndQuorumEpochRequest",
    ApiKey.END_QUORUM_EPOCH,
    (0, 1),
    (
        Field("cluster_id", STRING, nullable=ALL_VERSIONS, default=None),
        Field(
            "topics",
            Array((Field("topic_name", STRING), Field("partitions", Array(_END_PARTITION)))),
        ),
        Field("leader_endpoints", Array(_LEADER_ENDPOINT), versions=(1, None)),
    ),
    flexible=1,
)
END_QUORUM_EPOCH_RESPONSE = Message(
    "EndQuorumEpochResponse",
    ApiKey.END_QUORUM_EPOCH,
    (0, 1),
    (Field("error_code", INT16), Field("topics", Array(_EPOCH_TOPIC_RESPONSE))),
    flexible=1,
)

# ---- DescribeQuorum (55) ---------------------------------------------------------

DESCRIBE_QUORUM_REQUEST = Message(
    "DescribeQuorumRequest",
    ApiKey.DESCRIBE_QUORUM,
    (0, 2),
    (
        Field(
            "topics",
            Array(
                (
                    Field("topic_name", STRING),
                    Field("partitions", Array((Field("partition_index", INT32),))),
                )
            ),
        ),
    ),
    flexible=0,
)
_REPLICA_STATE = (
    Field("replica_id", INT32),
    Field("replica_directory_id", UUID, versions=(2, None)),
    Field("log_end_offset", INT64),
    Field("last_fetch_timestamp", INT64, versions=(1, None), default=-1),
    Field("last_caught_up_timestamp", INT64, versions=(1, None), default=-1),
)
_DESCRIBE_PARTITION = (
    Field("partition_index", INT32),
    Field("error_code", INT16),
    Field("error_message", STRING, versions=(2, None), nullable=(2, None), default=None),
    Field("leader_id", INT32),
    Field("leader_epoch", INT32),
    Field("high_watermark", INT64),
    Field("current_voters", Array(_REPLICA_STATE)),
    Field("observers", Array(_REPLICA_STATE)),
)
_NODE = (
    Field("node_id", INT32),
    Field("listeners", Array(_LEADER_ENDPOINT)),
)
DESCRIBE_QUORUM_RESPONSE = Message(
    "DescribeQuorumResponse",
    ApiKey.DESCRIBE_QUORUM,
    (0, 2),
    (
        Field("error_code", INT16),
        Field("error_message", STRING, versions=(2, None), nullable=(2, None), default=None),
        Field(
            "topics",
            Array((Field("topic_name", STRING), Field("partitions", Array(_DESCRIBE_PARTITION)))),
        ),
        Field("nodes", Array(_NODE), versions=(2, None)),
    ),
    flexible=0,
)

# ---- FetchSnapshot (59) ----------------------------------------------------------

_SNAPSHOT_ID = (Field("end_offset", INT64), Field("epoch", INT32))
_SNAPSHOT_PARTITION = (
    Field("partition", INT32),
    Field("current_leader_epoch", INT32),
    Field("snapshot_id", Struct(_SNAPSHOT_ID)),
    Field("position", INT64),
)
FETCH_SNAPSHOT_REQUEST = Message(
    "FetchSnapshotRequest",
    ApiKey.FETCH_SNAPSHOT,
    (0, 1),
    (
        Field("cluster_id", STRING, nullable=ALL_VERSIONS, default=None, tag=0),
        Field("replica_id", INT32, default=-1),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field(
            "topics",
            Array((Field("name", STRING), Field("partitions", Array(_SNAPSHOT_PARTITION)))),
        ),
    ),
    flexible=0,
)
_SNAPSHOT_PARTITION_RESPONSE = (
    Field("index", INT32),
    Field("error_code", INT16),
    Field("snapshot_id", Struct(_SNAPSHOT_ID)),
    Field(
        "current_leader",
        Struct((Field("leader_id", INT32, default=-1), Field("leader_epoch", INT32, default=-1))),
        tag=0,
    ),
    Field("size", INT64),
    Field("position", INT64),
    Field("unaligned_records", RECORDS),
)
FETCH_SNAPSHOT_RESPONSE = Message(
    "FetchSnapshotResponse",
    ApiKey.FETCH_SNAPSHOT,
    (0, 1),
    (
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field(
            "topics",
            Array(
                (
                    Field("name", STRING),
                    Field("partitions", Array(_SNAPSHOT_PARTITION_RESPONSE)),
                )
            ),
        ),
    ),
    flexible=0,
)

QUORUM_PAIRS = (
    (VOTE_REQUEST, VOTE_RESPONSE),
    (BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE),
    (END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE),
    (DESCRIBE_QUORUM_REQUEST, DESCRIBE_QUORUM_RESPONSE),
    (FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE),
)
"""The (request, response) declarations this module adds to the registry."""
