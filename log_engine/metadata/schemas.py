"""Kafka's metadata record schemas (``metadata/.../common/metadata/*.json``) in the schema DSL.

One :class:`Message` per record type; its ``api_key`` is the record type and
every version is flexible. The Python records in ``records.py`` write and read
their bodies through these.
"""

from __future__ import annotations

from typing import Any

from log_engine.protocol.apis.controller_apis import FEATURE_RANGES, LISTENERS
from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import BOOL, BYTES, INT8, INT16, INT32, INT64, STRING, UUID

NO_LEADER_CHANGE = -2
"""``PartitionChangeRecord.leader`` when the leader stays (Kafka's -2)."""

_ALL = (0, None)


def _ints(name: str, **kw: Any) -> Field:
    return Field(name, Array(INT32), **kw)


REGISTER_BROKER = Message(
    "RegisterBrokerRecord",
    0,
    (0, 3),
    (
        Field("broker_id", INT32),
        Field("is_migrating_zk_broker", BOOL, versions=(2, None)),
        Field("incarnation_id", UUID),
        Field("broker_epoch", INT64),
        Field("end_points", LISTENERS),
        Field("features", FEATURE_RANGES),
        Field("rack", STRING, nullable=_ALL, default=None),
        Field("fenced", BOOL, default=True),
        Field("in_controlled_shutdown", BOOL, versions=(1, None)),
        Field("log_dirs", Array(UUID), versions=(3, None), tag=0),
    ),
    flexible=0,
)
UNREGISTER_BROKER = Message(
    "UnregisterBrokerRecord",
    1,
    (0, 0),
    (Field("broker_id", INT32), Field("broker_epoch", INT64)),
    flexible=0,
)
TOPIC = Message(
    "TopicRecord", 2, (0, 0), (Field("name", STRING), Field("topic_id", UUID)), flexible=0
)
PARTITION = Message(
    "PartitionRecord",
    3,
    (0, 2),
    (
        Field("partition_id", INT32, default=-1),
        Field("topic_id", UUID),
        _ints("replicas"),
        _ints("isr"),
        _ints("removing_replicas"),
        _ints("adding_replicas"),
        Field("leader", INT32, default=-1),
        Field("leader_recovery_state", INT8, tag=0),
        Field("leader_epoch", INT32, default=-1),
        Field("partition_epoch", INT32, default=-1),
        Field("directories", Array(UUID), versions=(1, None)),
        _ints("eligible_leader_replicas", versions=(2, None), nullable=_ALL, default=None, tag=1),
        _ints("last_known_elr", versions=(2, None), nullable=_ALL, default=None, tag=2),
    ),
    flexible=0,
)
CONFIG = Message(
    "ConfigRecord",
    4,
    (0, 0),
    (
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("name", STRING),
        Field("value", STRING, nullable=_ALL, default=None),
    ),
    flexible=0,
)
PARTITION_CHANGE = Message(
    "PartitionChangeRecord",
    5,
    (0, 2),
    (
        Field("partition_id", INT32, default=-1),
        Field("topic_id", UUID),
        _ints("isr", nullable=_ALL, default=None, tag=0),
        Field("leader", INT32, default=NO_LEADER_CHANGE, tag=1),
        _ints("replicas", nullable=_ALL, default=None, tag=2),
        _ints("removing_replicas", nullable=_ALL, default=None, tag=3),
        _ints("adding_replicas", nullable=_ALL, default=None, tag=4),
        Field("leader_recovery_state", INT8, default=-1, tag=5),
        Field("directories", Array(UUID), versions=(1, None), nullable=_ALL, default=None, tag=8),
        _ints("eligible_leader_replicas", versions=(2, None), nullable=_ALL, default=None, tag=6),
        _ints("last_known_elr", versions=(2, None), nullable=_ALL, default=None, tag=7),
    ),
    flexible=0,
)
FENCE_BROKER = Message(
    "FenceBrokerRecord", 7, (0, 0), (Field("id", INT32), Field("epoch", INT64)), flexible=0
)
UNFENCE_BROKER = Message(
    "UnfenceBrokerRecord", 8, (0, 0), (Field("id", INT32), Field("epoch", INT64)), flexible=0
)
REMOVE_TOPIC = Message("RemoveTopicRecord", 9, (0, 0), (Field("topic_id", UUID),), flexible=0)
PRODUCER_IDS = Message(
    "ProducerIdsRecord",
    15,
    (0, 0),
    (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64, default=-1),
        Field("next_producer_id", INT64),
    ),
    flexible=0,
)
BROKER_REGISTRATION_CHANGE = Message(
    "BrokerRegistrationChangeRecord",
    17,
    (0, 2),
    (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64),
        Field("fenced", INT8, tag=0),
        Field("in_controlled_shutdown", INT8, versions=(1, None), tag=1),
        Field("log_dirs", Array(UUID), versions=(2, None), tag=2),
    ),
    flexible=0,
)
FEATURE_LEVEL = Message(
    "FeatureLevelRecord",
    12,
    (0, 0),
    (Field("name", STRING), Field("feature_level", INT16)),
    flexible=0,
)
NO_OP = Message("NoOpRecord", 20, (0, 0), (), flexible=0)
ACCESS_CONTROL_ENTRY = Message(
    "AccessControlEntryRecord",
    18,
    (0, 0),
    (
        Field("id", UUID),
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("pattern_type", INT8),
        Field("principal", STRING),
        Field("host", STRING),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ),
    flexible=0,
)
REMOVE_ACCESS_CONTROL_ENTRY = Message(
    "RemoveAccessControlEntryRecord", 19, (0, 0), (Field("id", UUID),), flexible=0
)
USER_SCRAM_CREDENTIAL = Message(
    "UserScramCredentialRecord",
    11,
    (0, 0),
    (
        Field("name", STRING),
        Field("mechanism", INT8),
        Field("salt", BYTES),
        Field("stored_key", BYTES),
        Field("server_key", BYTES),
        Field("iterations", INT32),
    ),
    flexible=0,
)
REMOVE_USER_SCRAM_CREDENTIAL = Message(
    "RemoveUserScramCredentialRecord",
    22,
    (0, 0),
    (Field("name", STRING), Field("mechanism", INT8)),
    flexible=0,
)
