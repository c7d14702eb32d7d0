"""Produce (api key 0), versions 0-11: append record batches to partitions.

Request: ``transactional_id`` (v3+), ``acks``, ``timeout_ms`` and per topic, per
partition a ``records`` blob: one or more record batches, opaque here and
decoded as a zero-copy ``memoryview`` of the request frame. Response: per
partition the base offset; v1+ throttle time, v2+ log-append time, v5+ log
start offset, v8+ per-record errors and an error message. v9+ is flexible;
v10+ may add the partition's current leader in tagged fields (skipped here); v11
is the same as v10.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import INT16, INT32, INT64, RECORDS, STRING
from log_engine.protocol.versions import ApiKey

_PARTITION_PRODUCE_DATA = (
    Field("index", INT32),
    Field("records", RECORDS, nullable=ALL_VERSIONS),
)
_TOPIC_PRODUCE_DATA = (
    Field("name", STRING),
    Field("partition_data", Array(_PARTITION_PRODUCE_DATA)),
)
PRODUCE_REQUEST = Message(
    "ProduceRequest",
    ApiKey.PRODUCE,
    (0, 11),
    (
        Field("transactional_id", STRING, versions=(3, None), nullable=(3, None), default=None),
        Field("acks", INT16),
        Field("timeout_ms", INT32),
        Field("topic_data", Array(_TOPIC_PRODUCE_DATA)),
    ),
    flexible=9,
)

_BATCH_INDEX_AND_ERROR_MESSAGE = (
    Field("batch_index", INT32, versions=(8, None)),
    Field(
        "batch_index_error_message",
        STRING,
        versions=(8, None),
        nullable=(8, None),
        default=None,
    ),
)
_PARTITION_PRODUCE_RESPONSE = (
    Field("index", INT32),
    Field("error_code", INT16),
    Field("base_offset", INT64),
    Field("log_append_time_ms", INT64, versions=(2, None), default=-1),
    Field("log_start_offset", INT64, versions=(5, None), default=-1),
    Field("record_errors", Array(_BATCH_INDEX_AND_ERROR_MESSAGE), versions=(8, None)),
    Field("error_message", STRING, versions=(8, None), nullable=(8, None), default=None),
)
_TOPIC_PRODUCE_RESPONSE = (
    Field("name", STRING),
    Field("partition_responses", Array(_PARTITION_PRODUCE_RESPONSE)),
)
PRODUCE_RESPONSE = Message(
    "ProduceResponse",
    ApiKey.PRODUCE,
    (0, 11),
    (
        Field("responses", Array(_TOPIC_PRODUCE_RESPONSE)),
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
    ),
    flexible=9,
)
