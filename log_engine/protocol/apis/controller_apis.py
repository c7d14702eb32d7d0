"""The APIs brokers send to the active controller (Kafka's "controller" listener).

- BrokerRegistration (62), v0-4: a broker's id, incarnation, listeners and rack;
  v1 adds ``is_migrating_zk_broker``, v2 ``log_dirs``, v3 ``previous_broker_epoch``,
  v4 is v3 (it only fixed a bug in Kafka's feature ranges).
- BrokerHeartbeat (63), v0-1: liveness, the broker's metadata offset, fence and
  shutdown wishes; v1 adds tagged ``offline_log_dirs``.
- AlterPartition (56), v0-3: a partition leader's ISR changes; v1 adds
  ``leader_recovery_state``, v2 names topics by id instead of name, v3 gives the
  broker epoch of each new ISR member (``new_isr_with_epochs``).
- AllocateProducerIds (67), v0: a block of producer ids for one broker.

All are flexible from v0. Brokers reach them on the controller listener, so
they sit in ``CONTROLLER_VERSIONS``, not in the client listener's or our
client's tables.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import BOOL, INT8, INT16, INT32, INT64, STRING, UINT16, UUID
from log_engine.protocol.versions import ApiKey

_THROTTLE = Field("throttle_time_ms", INT32)
_ERROR = Field("error_code", INT16)

LISTENERS = Array(
    (
        Field("name", STRING),
        Field("host", STRING),
        Field("port", UINT16),
        Field("security_protocol", INT16),
    )
)
"""A broker's listeners, as BrokerRegistration and RegisterBrokerRecord carry them."""
FEATURE_RANGES = Array(
    (
        Field("name", STRING),
        Field("min_supported_version", INT16),
        Field("max_supported_version", INT16),
    )
)
"""The feature versions a broker supports, as BrokerRegistration and RegisterBrokerRecord say."""


def _alter_partition_topics(partition_fields: tuple[Field, ...]) -> Field:
    """AlterPartition's ``topics`` (by name to v1, by id from v2), request or response."""
    return Field(
        "topics",
        Array(
            (
                Field("topic_name", STRING, versions=(0, 1)),
                Field("topic_id", UUID, versions=(2, None)),
                Field("partitions", Array(partition_fields)),
            )
        ),
    )


BROKER_REGISTRATION_REQUEST = Message(
    "BrokerRegistrationRequest",
    ApiKey.BROKER_REGISTRATION,
    (0, 4),
    (
        Field("broker_id", INT32),
        Field("cluster_id", STRING),
        Field("incarnation_id", UUID),
        Field("listeners", LISTENERS),
        Field("features", FEATURE_RANGES),
        Field("rack", STRING, nullable=ALL_VERSIONS, default=None),
        Field("is_migrating_zk_broker", BOOL, versions=(1, None)),
        Field("log_dirs", Array(UUID), versions=(2, None)),
        Field("previous_broker_epoch", INT64, versions=(3, None), default=-1),
    ),
    flexible=0,
)
BROKER_REGISTRATION_RESPONSE = Message(
    "BrokerRegistrationResponse",
    ApiKey.BROKER_REGISTRATION,
    (0, 4),
    (_THROTTLE, _ERROR, Field("broker_epoch", INT64, default=-1)),
    flexible=0,
)

BROKER_HEARTBEAT_REQUEST = Message(
    "BrokerHeartbeatRequest",
    ApiKey.BROKER_HEARTBEAT,
    (0, 1),
    (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64, default=-1),
        Field("current_metadata_offset", INT64),
        Field("want_fence", BOOL),
        Field("want_shut_down", BOOL),
        Field("offline_log_dirs", Array(UUID), versions=(1, None), tag=0),
    ),
    flexible=0,
)
BROKER_HEARTBEAT_RESPONSE = Message(
    "BrokerHeartbeatResponse",
    ApiKey.BROKER_HEARTBEAT,
    (0, 1),
    (
        _THROTTLE,
        _ERROR,
        Field("is_caught_up", BOOL, default=False),
        Field("is_fenced", BOOL, default=True),
        Field("should_shut_down", BOOL),
    ),
    flexible=0,
)

ALTER_PARTITION_REQUEST = Message(
    "AlterPartitionRequest",
    ApiKey.ALTER_PARTITION,
    (0, 3),
    (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64, default=-1),
        _alter_partition_topics(
            (
                Field("partition_index", INT32),
                Field("leader_epoch", INT32),
                Field("new_isr", Array(INT32), versions=(0, 2)),
                Field(
                    "new_isr_with_epochs",
                    Array(
                        (
                            Field("broker_id", INT32),
                            Field("broker_epoch", INT64, default=-1),
                        )
                    ),
                    versions=(3, None),
                ),
                Field("leader_recovery_state", INT8, versions=(1, None)),
                Field("partition_epoch", INT32),
            )
        ),
    ),
    flexible=0,
)
ALTER_PARTITION_RESPONSE = Message(
    "AlterPartitionResponse",
    ApiKey.ALTER_PARTITION,
    (0, 3),
    (
        _THROTTLE,
        _ERROR,
        _alter_partition_topics(
            (
                Field("partition_index", INT32),
                Field("error_code", INT16),
                Field("leader_id", INT32),
                Field("leader_epoch", INT32),
                Field("isr", Array(INT32)),
                Field("leader_recovery_state", INT8, versions=(1, None)),
                Field("partition_epoch", INT32),
            )
        ),
    ),
    flexible=0,
)

ALLOCATE_PRODUCER_IDS_REQUEST = Message(
    "AllocateProducerIdsRequest",
    ApiKey.ALLOCATE_PRODUCER_IDS,
    (0, 0),
    (Field("broker_id", INT32), Field("broker_epoch", INT64, default=-1)),
    flexible=0,
)
ALLOCATE_PRODUCER_IDS_RESPONSE = Message(
    "AllocateProducerIdsResponse",
    ApiKey.ALLOCATE_PRODUCER_IDS,
    (0, 0),
    (_THROTTLE, _ERROR, Field("producer_id_start", INT64), Field("producer_id_len", INT32)),
    flexible=0,
)

CONTROLLER_API_PAIRS = (
    (ALTER_PARTITION_REQUEST, ALTER_PARTITION_RESPONSE),
    (BROKER_REGISTRATION_REQUEST, BROKER_REGISTRATION_RESPONSE),
    (BROKER_HEARTBEAT_REQUEST, BROKER_HEARTBEAT_RESPONSE),
    (ALLOCATE_PRODUCER_IDS_REQUEST, ALLOCATE_PRODUCER_IDS_RESPONSE),
)
"""(request, response) of each API, for the registry in ``apis/__init__.py``."""
