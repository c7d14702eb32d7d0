"""ApiVersions (api key 18), versions 0-2: which versions of each api a broker serves.

The request has no fields before the flexible v3. The response lists
``{api_key, min_version, max_version}`` per api (v1+ adds throttle time). The
KIP-511 fallback, for a request at a version the broker does not serve, is a v0
body with error 35 and only the ApiVersions row (see ``codec``).
"""

from __future__ import annotations

from log_engine.protocol.schema import Array, Field, Message
from log_engine.protocol.types import INT16, INT32
from log_engine.protocol.versions import ApiKey

API_VERSIONS_REQUEST = Message("ApiVersionsRequest", ApiKey.API_VERSIONS, (0, 2), ())

_API_VERSION = (
    Field("api_key", INT16),
    Field("min_version", INT16),
    Field("max_version", INT16),
)
API_VERSIONS_RESPONSE = Message(
    "ApiVersionsResponse",
    ApiKey.API_VERSIONS,
    (0, 2),
    (
        Field("error_code", INT16),
        Field("api_keys", Array(_API_VERSION)),
        Field("throttle_time_ms", INT32, versions=(1, None)),
    ),
)
