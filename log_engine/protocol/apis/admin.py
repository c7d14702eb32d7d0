"""Topic and config administration: CreateTopics (19, v0-7), DeleteTopics (20, v0-6),
DeleteRecords (21, v0-2), DescribeConfigs (32, v0-4), CreatePartitions (37, v0-3),
IncrementalAlterConfigs (44, v0-1).

CreateTopics v1+ can validate only, v1+ returns error messages, v2+ throttle
time; ``num_partitions`` / ``replication_factor`` -1 mean "broker default" (v4+)
or "see assignments"; v5+ is flexible and returns the topic's partitions,
replication factor and configs, v7+ its id. DeleteTopics v4+ is flexible, v5+
returns error messages, v6+ names ``topics`` by name or id. DescribeConfigs v0
has ``is_default``; v1+ replaces it with ``config_source`` and can list
synonyms, v3+ adds type and documentation, v4+ is flexible. DeleteRecords and
CreatePartitions v2+ are flexible (CreatePartitions v3 is the same as v2).
IncrementalAlterConfigs v1+ is flexible; its ``config_operation`` is 0 SET,
1 DELETE, 2 APPEND, 3 SUBTRACT. Resource types: 2 topic, 4 broker.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import BOOL, INT8, INT16, INT32, INT64, STRING, UUID
from log_engine.protocol.versions import ApiKey

_THROTTLE_TIME = Field("throttle_time_ms", INT32)

_CREATABLE_REPLICA_ASSIGNMENT = (
    Field("partition_index", INT32),
    Field("broker_ids", Array(INT32)),
)
_CREATABLE_TOPIC_CONFIG = (
    Field("name", STRING),
    Field("value", STRING, nullable=ALL_VERSIONS),
)
_CREATABLE_TOPIC = (
    Field("name", STRING),
    Field("num_partitions", INT32),
    Field("replication_factor", INT16),
    Field("assignments", Array(_CREATABLE_REPLICA_ASSIGNMENT)),
    Field("configs", Array(_CREATABLE_TOPIC_CONFIG)),
)
CREATE_TOPICS_REQUEST = Message(
    "CreateTopicsRequest",
    ApiKey.CREATE_TOPICS,
    (0, 7),
    (
        Field("topics", Array(_CREATABLE_TOPIC)),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOL, versions=(1, None), default=False),
    ),
    flexible=5,
)
_CREATABLE_TOPIC_CONFIGS = (
    Field("name", STRING, versions=(5, None)),
    Field("value", STRING, versions=(5, None), nullable=(5, None)),
    Field("read_only", BOOL, versions=(5, None)),
    Field("config_source", INT8, versions=(5, None), default=-1),
    Field("is_sensitive", BOOL, versions=(5, None)),
)
_CREATABLE_TOPIC_RESULT = (
    Field("name", STRING),
    Field("topic_id", UUID, versions=(7, None)),
    Field("error_code", INT16),
    Field("error_message", STRING, versions=(1, None), nullable=ALL_VERSIONS),
    Field("topic_config_error_code", INT16, versions=(5, None), tag=0),
    Field("num_partitions", INT32, versions=(5, None), default=-1),
    Field("replication_factor", INT16, versions=(5, None), default=-1),
    Field(
        "configs", Array(_CREATABLE_TOPIC_CONFIGS), versions=(5, None), nullable=(5, None)
    ),
)
CREATE_TOPICS_RESPONSE = Message(
    "CreateTopicsResponse",
    ApiKey.CREATE_TOPICS,
    (0, 7),
    (
        Field("throttle_time_ms", INT32, versions=(2, None)),
        Field("topics", Array(_CREATABLE_TOPIC_RESULT)),
    ),
    flexible=5,
)

_DELETE_TOPIC_STATE = (
    Field("name", STRING, versions=(6, None), nullable=(6, None), default=None),
    Field("topic_id", UUID, versions=(6, None)),
)
DELETE_TOPICS_REQUEST = Message(
    "DeleteTopicsRequest",
    ApiKey.DELETE_TOPICS,
    (0, 6),
    (
        Field("topics", Array(_DELETE_TOPIC_STATE), versions=(6, None)),
        Field("topic_names", Array(STRING), versions=(0, 5)),
        Field("timeout_ms", INT32),
    ),
    flexible=4,
)
_DELETABLE_TOPIC_RESULT = (
    Field("name", STRING, nullable=(6, None)),
    Field("topic_id", UUID, versions=(6, None)),
    Field("error_code", INT16),
    Field("error_message", STRING, versions=(5, None), nullable=(5, None), default=None),
)
DELETE_TOPICS_RESPONSE = Message(
    "DeleteTopicsResponse",
    ApiKey.DELETE_TOPICS,
    (0, 6),
    (
        Field("throttle_time_ms", INT32, versions=(1, None)),
        Field("responses", Array(_DELETABLE_TOPIC_RESULT)),
    ),
    flexible=4,
)

_DELETE_RECORDS_PARTITION = (
    Field("partition_index", INT32),
    Field("offset", INT64),
)
_DELETE_RECORDS_TOPIC = (
    Field("name", STRING),
    Field("partitions", Array(_DELETE_RECORDS_PARTITION)),
)
DELETE_RECORDS_REQUEST = Message(
    "DeleteRecordsRequest",
    ApiKey.DELETE_RECORDS,
    (0, 2),
    (
        Field("topics", Array(_DELETE_RECORDS_TOPIC)),
        Field("timeout_ms", INT32),
    ),
    flexible=2,
)
_DELETE_RECORDS_PARTITION_RESULT = (
    Field("partition_index", INT32),
    Field("low_watermark", INT64),
    Field("error_code", INT16),
)
_DELETE_RECORDS_TOPIC_RESULT = (
    Field("name", STRING),
    Field("partitions", Array(_DELETE_RECORDS_PARTITION_RESULT)),
)
DELETE_RECORDS_RESPONSE = Message(
    "DeleteRecordsResponse",
    ApiKey.DELETE_RECORDS,
    (0, 2),
    (_THROTTLE_TIME, Field("topics", Array(_DELETE_RECORDS_TOPIC_RESULT))),
    flexible=2,
)

_DESCRIBE_CONFIGS_RESOURCE = (
    Field("resource_type", INT8),
    Field("resource_name", STRING),
    Field("configuration_keys", Array(STRING), nullable=ALL_VERSIONS),
)
DESCRIBE_CONFIGS_REQUEST = Message(
    "DescribeConfigsRequest",
    ApiKey.DESCRIBE_CONFIGS,
    (0, 4),
    (
        Field("resources", Array(_DESCRIBE_CONFIGS_RESOURCE)),
        Field("include_synonyms", BOOL, versions=(1, None), default=False),
        Field("include_documentation", BOOL, versions=(3, None), default=False),
    ),
    flexible=4,
)
_DESCRIBE_CONFIGS_SYNONYM = (
    Field("name", STRING, versions=(1, None)),
    Field("value", STRING, versions=(1, None), nullable=ALL_VERSIONS),
    Field("source", INT8, versions=(1, None)),
)
_DESCRIBE_CONFIGS_RESOURCE_RESULT = (
    Field("name", STRING),
    Field("value", STRING, nullable=ALL_VERSIONS),
    Field("read_only", BOOL),
    Field("is_default", BOOL, versions=(0, 0)),
    Field("config_source", INT8, versions=(1, None), default=-1),
    Field("is_sensitive", BOOL),
    Field("synonyms", Array(_DESCRIBE_CONFIGS_SYNONYM), versions=(1, None)),
    Field("config_type", INT8, versions=(3, None), default=0),
    Field("documentation", STRING, versions=(3, None), nullable=ALL_VERSIONS),
)
_DESCRIBE_CONFIGS_RESULT = (
    Field("error_code", INT16),
    Field("error_message", STRING, nullable=ALL_VERSIONS),
    Field("resource_type", INT8),
    Field("resource_name", STRING),
    Field("configs", Array(_DESCRIBE_CONFIGS_RESOURCE_RESULT)),
)
DESCRIBE_CONFIGS_RESPONSE = Message(
    "DescribeConfigsResponse",
    ApiKey.DESCRIBE_CONFIGS,
    (0, 4),
    (_THROTTLE_TIME, Field("results", Array(_DESCRIBE_CONFIGS_RESULT))),
    flexible=4,
)

_CREATE_PARTITIONS_ASSIGNMENT = (Field("broker_ids", Array(INT32)),)
_CREATE_PARTITIONS_TOPIC = (
    Field("name", STRING),
    Field("count", INT32),
    Field("assignments", Array(_CREATE_PARTITIONS_ASSIGNMENT), nullable=ALL_VERSIONS),
)
CREATE_PARTITIONS_REQUEST = Message(
    "CreatePartitionsRequest",
    ApiKey.CREATE_PARTITIONS,
    (0, 3),
    (
        Field("topics", Array(_CREATE_PARTITIONS_TOPIC)),
        Field("timeout_ms", INT32),
        Field("validate_only", BOOL),
    ),
    flexible=2,
)
_CREATE_PARTITIONS_TOPIC_RESULT = (
    Field("name", STRING),
    Field("error_code", INT16),
    Field("error_message", STRING, nullable=ALL_VERSIONS, default=None),
)
CREATE_PARTITIONS_RESPONSE = Message(
    "CreatePartitionsResponse",
    ApiKey.CREATE_PARTITIONS,
    (0, 3),
    (_THROTTLE_TIME, Field("results", Array(_CREATE_PARTITIONS_TOPIC_RESULT))),
    flexible=2,
)

_ALTERABLE_CONFIG = (
    Field("name", STRING),
    Field("config_operation", INT8),
    Field("value", STRING, nullable=ALL_VERSIONS),
)
_ALTER_CONFIGS_RESOURCE = (
    Field("resource_type", INT8),
    Field("resource_name", STRING),
    Field("configs", Array(_ALTERABLE_CONFIG)),
)
INCREMENTAL_ALTER_CONFIGS_REQUEST = Message(
    "IncrementalAlterConfigsRequest",
    ApiKey.INCREMENTAL_ALTER_CONFIGS,
    (0, 1),
    (
        Field("resources", Array(_ALTER_CONFIGS_RESOURCE)),
        Field("validate_only", BOOL),
    ),
    flexible=1,
)
_ALTER_CONFIGS_RESOURCE_RESPONSE = (
    Field("error_code", INT16),
    Field("error_message", STRING, nullable=ALL_VERSIONS),
    Field("resource_type", INT8),
    Field("resource_name", STRING),
)
INCREMENTAL_ALTER_CONFIGS_RESPONSE = Message(
    "IncrementalAlterConfigsResponse",
    ApiKey.INCREMENTAL_ALTER_CONFIGS,
    (0, 1),
    (_THROTTLE_TIME, Field("responses", Array(_ALTER_CONFIGS_RESOURCE_RESPONSE))),
    flexible=1,
)
