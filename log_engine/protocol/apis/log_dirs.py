"""DescribeLogDirs (35, v0-4): each log directory of a broker and the size of every
partition in it (what ``kafka-log-dirs.sh --describe`` prints).

Request: ``topics`` (null: every partition the broker holds), each a name and
partition indexes. Response: one result per log directory (error code, path,
topics -> partitions with ``partition_size`` in bytes, ``offset_lag`` = log
end minus high watermark, ``is_future_key`` for a replica being moved between
directories). v1 is v0 (throttling before the answer); v2+ is flexible; v3+
adds a top-level ``error_code``; v4+ adds each directory's ``total_bytes`` and
``usable_bytes`` (-1: unknown).
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import BOOL, INT16, INT32, INT64, STRING
from log_engine.protocol.versions import ApiKey

_TOPIC_WANTED = (
    Field("topic", STRING),
    Field("partitions", Array(INT32)),
)
DESCRIBE_LOG_DIRS_REQUEST = Message(
    "DescribeLogDirsRequest",
    ApiKey.DESCRIBE_LOG_DIRS,
    (0, 4),
    (Field("topics", Array(_TOPIC_WANTED), nullable=ALL_VERSIONS),),
    flexible=2,
)

_PARTITION = (
    Field("partition_index", INT32),
    Field("partition_size", INT64),
    Field("offset_lag", INT64),
    Field("is_future_key", BOOL, default=False),
)
_TOPIC = (
    Field("name", STRING),
    Field("partitions", Array(_PARTITION)),
)
_RESULT = (
    Field("error_code", INT16),
    Field("log_dir", STRING),
    Field("topics", Array(_TOPIC)),
    Field("total_bytes", INT64, versions=(4, None), default=-1),
    Field("usable_bytes", INT64, versions=(4, None), default=-1),
)
DESCRIBE_LOG_DIRS_RESPONSE = Message(
    "DescribeLogDirsResponse",
    ApiKey.DESCRIBE_LOG_DIRS,
    (0, 4),
    (
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, versions=(3, None), default=0),
        Field("results", Array(_RESULT)),
    ),
    flexible=2,
)
