"""InitProducerId (api key 22), versions 0-5: a producer id and epoch for idempotence.

An idempotent producer sends ``transactional_id=None``; the broker answers
with a fresh ``producer_id`` and ``producer_epoch``. v1 is the same as v0;
v2+ is flexible; v3+ sends the current id and epoch (-1 for a new producer).
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Field, Message
from log_engine.protocol.types import INT16, INT32, INT64, STRING
from log_engine.protocol.versions import ApiKey

INIT_PRODUCER_ID_REQUEST = Message(
    "InitProducerIdRequest",
    ApiKey.INIT_PRODUCER_ID,
    (0, 5),
    (
        Field("transactional_id", STRING, nullable=ALL_VERSIONS),
        Field("transaction_timeout_ms", INT32),
        Field("producer_id", INT64, versions=(3, None), default=-1),
        Field("producer_epoch", INT16, versions=(3, None), default=-1),
    ),
    flexible=2,
)

INIT_PRODUCER_ID_RESPONSE = Message(
    "InitProducerIdResponse",
    ApiKey.INIT_PRODUCER_ID,
    (0, 5),
    (
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
    ),
    flexible=2,
)
