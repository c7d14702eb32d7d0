"""ApiVersions (api key 18), versions 0-4: which versions of each api a broker serves.

The request has no fields before the flexible v3, which names the client
software (v4 is the same as v3). The response lists ``{api_key, min_version,
max_version}`` per api (v1+ adds throttle time; v3+ tagged feature fields,
which we skip, except the finalized-features epoch). Its response header is
always v0. The KIP-511 fallback, for a request at a version the broker does not
serve, is a v0 body with error 35 and only the ApiVersions row (see ``codec``).
"""

from __future__ import annotations

from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import INT16, INT32, INT64, STRING
from log_engine.protocol.versions import ApiKey

API_VERSIONS_REQUEST = Message(
    "ApiVersionsRequest",
    ApiKey.API_VERSIONS,
    (0, 4),
    (
        Field("client_software_name", STRING, versions=(3, None)),
        Field("client_software_version", STRING, versions=(3, None)),
    ),
    flexible=3,
)

_API_VERSION = (
    Field("api_key", INT16),
    Field("min_version", INT16),
    Field("max_version", INT16),
)
API_VERSIONS_RESPONSE = Message(
    "ApiVersionsResponse",
    ApiKey.API_VERSIONS,
    (0, 4),
    (
        Field("error_code", INT16),
        Field("api_keys", Array(_API_VERSION)),
        Field("throttle_time_ms", INT32, versions=(1, None)),
        Field("finalized_features_epoch", INT64, versions=(3, None), default=-1, tag=1),
    ),
    flexible=3,
)
