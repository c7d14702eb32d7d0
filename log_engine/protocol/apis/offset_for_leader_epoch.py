"""OffsetForLeaderEpoch (api key 23), versions 0-4: where did a leader epoch end?

A follower names, per partition, the latest leader epoch in its own log; the
leader answers with the largest epoch it knows that is not newer and that
epoch's end offset (the next epoch's start offset, or its log end offset for
its current epoch), and the follower truncates to the answer before fetching
(KIP-101). v1+ returns the epoch found, v2+ carries the sender's current
leader epoch (fencing) and a throttle time, v3+ the sender's replica id
(-2 for a consumer, a broker id for a follower), v4+ is flexible.
"""

from __future__ import annotations

from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import INT16, INT32, INT64, STRING
from log_engine.protocol.versions import ApiKey

_PARTITION = (
    Field("partition", INT32),
    Field("current_leader_epoch", INT32, versions=(2, None), default=-1),
    Field("leader_epoch", INT32),
)
_TOPIC = (
    Field("topic", STRING),
    Field("partitions", Array(_PARTITION)),
)
OFFSET_FOR_LEADER_EPOCH_REQUEST = Message(
    "OffsetForLeaderEpochRequest",
    ApiKey.OFFSET_FOR_LEADER_EPOCH,
    (0, 4),
    (
        Field("replica_id", INT32, versions=(3, None), default=-2),
        Field("topics", Array(_TOPIC)),
    ),
    flexible=4,
)

_EPOCH_END_OFFSET = (
    Field("error_code", INT16),
    Field("partition", INT32),
    Field("leader_epoch", INT32, versions=(1, None), default=-1),
    Field("end_offset", INT64, default=-1),
)
_TOPIC_RESULT = (
    Field("topic", STRING),
    Field("partitions", Array(_EPOCH_END_OFFSET)),
)
OFFSET_FOR_LEADER_EPOCH_RESPONSE = Message(
    "OffsetForLeaderEpochResponse",
    ApiKey.OFFSET_FOR_LEADER_EPOCH,
    (0, 4),
    (
        Field("throttle_time_ms", INT32, versions=(2, None), default=0),
        Field("topics", Array(_TOPIC_RESULT)),
    ),
    flexible=4,
)
