"""SaslHandshake (api key 17, v0-1) and SaslAuthenticate (api key 36, v0-2).

SaslHandshake names the mechanism; the broker answers with the mechanisms it
enables. After a v0 handshake the SASL tokens travel as bare size-prefixed
frames; after v1 they travel inside SaslAuthenticate requests (KIP-152), whose
v1+ responses carry ``session_lifetime_ms`` (0: no re-authentication needed).
v2 of SaslAuthenticate is flexible.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import BYTES, INT16, INT64, STRING
from log_engine.protocol.versions import ApiKey

SASL_HANDSHAKE_REQUEST = Message(
    "SaslHandshakeRequest",
    ApiKey.SASL_HANDSHAKE,
    (0, 1),
    (Field("mechanism", STRING),),
)

SASL_HANDSHAKE_RESPONSE = Message(
    "SaslHandshakeResponse",
    ApiKey.SASL_HANDSHAKE,
    (0, 1),
    (
        Field("error_code", INT16),
        Field("mechanisms", Array(STRING)),
    ),
)

SASL_AUTHENTICATE_REQUEST = Message(
    "SaslAuthenticateRequest",
    ApiKey.SASL_AUTHENTICATE,
    (0, 2),
    (Field("auth_bytes", BYTES),),
    flexible=2,
)

SASL_AUTHENTICATE_RESPONSE = Message(
    "SaslAuthenticateResponse",
    ApiKey.SASL_AUTHENTICATE,
    (0, 2),
    (
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=ALL_VERSIONS),
        Field("auth_bytes", BYTES),
        Field("session_lifetime_ms", INT64, versions=(1, None), default=0),
    ),
    flexible=2,
)
