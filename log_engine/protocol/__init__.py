"""The Kafka wire protocol, classic and flexible (KIP-482) versions: our own codec.

Bodies are plain dicts with snake_case keys named after the spec's fields
(``TopicData`` -> ``topic_data``); nested structs are dicts, arrays lists, null
arrays None; records stay opaque (``memoryview`` slices when decoded, bytes or
``FileSlice`` pieces when encoded). One module per API family declares the
messages (``apis/``). Two version tables: :data:`SUPPORTED_VERSIONS`, what
the broker serves (classic versions only), and :data:`CLIENT_VERSIONS`, what
our client speaks to any broker (up to the newest, flexible ones included).

Broker::

    header, body = decode_request(frame)      # UnsupportedVersionError, UnknownApiKeyError,
    ...                                       # InvalidRequestError for bad input
    transport.writelines(encode_response(header, response_body))

Client::

    sock.sendall(encode_request(ApiKey.METADATA, 8, corr_id, "sluice", {"topics": None}))
    corr_id, body = decode_response(ApiKey.METADATA, 8, frame)
"""

from log_engine.errors import (
    CorruptResponseError,
    EncodeError,
    InvalidRequestError,
    KafkaError,
    ProtocolDecodeError,
    UnknownApiKeyError,
    UnsupportedVersionError,
    error_for_code,
)
from log_engine.protocol.apis import schema_for
from log_engine.protocol.codec import (
    api_versions_fallback_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from log_engine.protocol.headers import RequestHeader
from log_engine.protocol.types import Chunk
from log_engine.protocol.versions import (
    CLIENT_VERSIONS,
    SUPPORTED_VERSIONS,
    ApiKey,
    api_version_entries,
)

__all__ = [
    "CLIENT_VERSIONS",
    "SUPPORTED_VERSIONS",
    "ApiKey",
    "Chunk",
    "CorruptResponseError",
    "EncodeError",
    "InvalidRequestError",
    "KafkaError",
    "ProtocolDecodeError",
    "RequestHeader",
    "UnknownApiKeyError",
    "UnsupportedVersionError",
    "api_version_entries",
    "api_versions_fallback_response",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "error_for_code",
    "schema_for",
]
