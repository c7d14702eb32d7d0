"""The codec's entry points: frames in, dicts out, and back.

Broker side: :func:`decode_request` turns a request frame (the bytes after the
4-byte size) into a :class:`RequestHeader` and a body dict, raising only
:class:`UnsupportedVersionError`, :class:`UnknownApiKeyError` or
:class:`InvalidRequestError` for bad input; :func:`encode_response` turns a body
dict into the complete response frame as chunks, records payloads (bytes or
``FileSlice``) attached rather than copied; :func:`api_versions_fallback_response`
is the KIP-511 answer to an ApiVersions request at a version we do not serve.

Client side: :func:`encode_request` builds one complete request frame (bytes)
and :func:`decode_response` reads a response frame, raising
:class:`CorruptResponseError` when it does not parse.

Flexible versions get request header v2 and response header v1 (ApiVersions
responses keep header v0). Every version of both tables (``SUPPORTED_VERSIONS``
for the broker, ``CLIENT_VERSIONS`` for the client) is compiled once, at import.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from log_engine.errors import (
    CorruptResponseError,
    EncodeError,
    InvalidRequestError,
    ProtocolDecodeError,
    UnknownApiKeyError,
    UnsupportedVersionError,
)
from log_engine.protocol.apis import REQUESTS, RESPONSES, schema_for
from log_engine.protocol.apis.api_versions import API_VERSIONS_RESPONSE
from log_engine.protocol.headers import (
    REQUEST_HEADER_FIXED_SIZE,
    RequestHeader,
    read_request_header,
    read_response_header,
    response_header_flexible,
    write_request_header,
    write_response_header,
)
from log_engine.protocol.schema import CompiledStruct
from log_engine.protocol.types import Chunk, Reader, Writer
from log_engine.protocol.versions import (
    CLIENT_VERSIONS,
    CONTROLLER_VERSIONS,
    SUPPORTED_VERSIONS,
    ApiKey,
)

# Every served (api key, version), compiled at import: a wrong declaration fails
# here, and the hot path is one dict lookup.
_REQUEST_SCHEMAS: dict[tuple[int, int], CompiledStruct] = {
    (key, version): REQUESTS[key].schema(version)
    for key, (lo, hi) in SUPPORTED_VERSIONS.items()
    for version in range(lo, hi + 1)
}
_RESPONSE_SCHEMAS: dict[tuple[int, int], CompiledStruct] = {
    (key, version): RESPONSES[key].schema(version)
    for key, (lo, hi) in SUPPORTED_VERSIONS.items()
    for version in range(lo, hi + 1)
}
# The controller listener's table (KRaft's quorum APIs, flexible versions).
_CONTROLLER_REQUEST_SCHEMAS: dict[tuple[int, int], CompiledStruct] = {
    (key, version): REQUESTS[key].schema(version)
    for key, (lo, hi) in CONTROLLER_VERSIONS.items()
    for version in range(lo, hi + 1)
}
# Every version the client speaks: (request schema, response schema, whether the
# response has header v1), compiled at import as well.
_CLIENT_SCHEMAS: dict[tuple[int, int], tuple[CompiledStruct, CompiledStruct, bool]] = {
    (key, version): (
        REQUESTS[key].schema(version),
        RESPONSES[key].schema(version),
        response_header_flexible(key, RESPONSES[key].is_flexible(version)),
    )
    for key, (lo, hi) in CLIENT_VERSIONS.items()
    for version in range(lo, hi + 1)
}
_I16 = struct.Struct(">h")
_UNSUPPORTED_VERSION = UnsupportedVersionError.errno
# A safety net: the reader raises only ProtocolDecodeError, but no other decode
# failure may escape decode_request either.
_DECODE_FAILURES = (ProtocolDecodeError, struct.error, IndexError, UnicodeDecodeError)


def decode_request(
    frame: bytes | bytearray | memoryview, *, controller: bool = False
) -> tuple[RequestHeader, dict[str, Any]]:
    """Decode one request frame (without its size prefix) into header and body.

    ``controller``: the frame came in on the controller listener, which serves
    :data:`CONTROLLER_VERSIONS` instead of :data:`SUPPORTED_VERSIONS`. Fields the
    version lacks are filled with their defaults; records fields are zero-copy
    ``memoryview`` slices of ``frame`` (keep ``frame`` unchanged while they are
    in use).
    """
    reader = Reader(frame)
    if reader.end < REQUEST_HEADER_FIXED_SIZE:
        raise InvalidRequestError(f"request of {reader.end} bytes is shorter than its header")
    header, client_id_ok = read_request_header(reader)
    table = _CONTROLLER_REQUEST_SCHEMAS if controller else _REQUEST_SCHEMAS
    schema = table.get((header.api_key, header.api_version))
    if schema is None:
        raise _refusal(header, CONTROLLER_VERSIONS if controller else SUPPORTED_VERSIONS)
    if not client_id_ok:
        raise InvalidRequestError("malformed client_id in the request header", header=header)
    try:
        if schema.flexible:  # request header v2: its tagged fields follow client_id
            reader.tagged_fields()
        body = schema.read(reader)
    except _DECODE_FAILURES as exc:
        raise InvalidRequestError(
            f"{schema.name} v{header.api_version}: {exc}", header=header
        ) from exc
    if reader.pos != reader.end and not _tolerated_trailer(header, frame, reader.pos):
        raise InvalidRequestError(
            f"{schema.name} v{header.api_version}: {reader.end - reader.pos} trailing bytes",
            header=header,
        )
    return header, body


def _tolerated_trailer(header: RequestHeader, frame: Any, pos: int) -> bool:
    """librdkafka (2.16 at least) ends AlterUserScramCredentials v0 with one zero
    byte too many; Kafka ignores trailing bytes, so for that request only, zero
    bytes after the body are accepted."""
    return header.api_key == ApiKey.ALTER_USER_SCRAM_CREDENTIALS and not any(
        bytes(frame[pos:])
    )


def _refusal(
    header: RequestHeader, served: Mapping[ApiKey, tuple[int, int]]
) -> InvalidRequestError | UnsupportedVersionError:
    try:
        key = ApiKey(header.api_key)
    except ValueError:
        return UnknownApiKeyError(f"unknown api key {header.api_key}", header=header)
    bounds = served.get(key)
    text = f"{bounds[0]}-{bounds[1]}" if bounds else "none"
    return UnsupportedVersionError(
        f"{key.name} v{header.api_version} is not supported (served: {text})", header=header
    )


def encode_response(header: RequestHeader, body: dict[str, Any]) -> list[Chunk]:
    """Encode the response to ``header``'s request: the complete frame, in chunks.

    The first chunk starts with the size prefix and the response header (v0, or
    v1 for a flexible version other than ApiVersions).
    A records field may be None, bytes-like, or a list of ``bytes | FileSlice``
    pieces; each piece becomes its own chunk (not copied), so the caller can
    ``sendfile`` the slices. Raises :class:`EncodeError` if ``body`` does not fit.
    """
    schema = _RESPONSE_SCHEMAS.get((header.api_key, header.api_version))
    if schema is None:
        schema = schema_for(header.api_key, header.api_version, "response")
    writer = Writer(reserve=4)
    write_response_header(
        writer, header.correlation_id, response_header_flexible(header.api_key, schema.flexible)
    )
    try:
        schema.write(writer, body)
    except EncodeError as exc:
        raise EncodeError(f"{exc} [version {header.api_version}]") from exc
    return writer.chunks(framed=True)


def api_versions_fallback_response(correlation_id: int) -> bytes:
    """The KIP-511 answer to an ApiVersions request at a version we do not serve.

    A complete frame (size prefix, response header v0) with a v0 body: error 35
    ``UNSUPPORTED_VERSION`` and only the ApiVersions row of
    :data:`SUPPORTED_VERSIONS`, so the client retries at our highest version.
    """
    lo, hi = SUPPORTED_VERSIONS[ApiKey.API_VERSIONS]
    body = {
        "error_code": UnsupportedVersionError.errno,
        "api_keys": [{"api_key": int(ApiKey.API_VERSIONS), "min_version": lo, "max_version": hi}],
    }
    writer = Writer(reserve=4)
    write_response_header(writer, correlation_id)
    API_VERSIONS_RESPONSE.schema(0).write(writer, body)
    return b"".join(writer.chunks(framed=True))  # type: ignore[arg-type]


def encode_request(
    api_key: int,
    api_version: int,
    correlation_id: int,
    client_id: str | None,
    body: dict[str, Any],
) -> bytes:
    """Encode a request frame (size prefix, request header v1 or v2, body) as one bytes.

    Records fields are copied in. ``ValueError`` for an api or version we have
    no schema for; :class:`EncodeError` if ``body`` does not fit.
    """
    compiled = _CLIENT_SCHEMAS.get((api_key, api_version))
    if compiled is not None:
        schema = compiled[0]
    else:
        try:
            schema = schema_for(api_key, api_version, "request")
        except KeyError:
            raise ValueError(f"no request schema for api key {api_key}") from None
    writer = Writer(inline=True, reserve=4)
    write_request_header(
        writer, RequestHeader(api_key, api_version, correlation_id, client_id), schema.flexible
    )
    try:
        schema.write(writer, body)
    except EncodeError as exc:
        raise EncodeError(f"{exc} [version {api_version}]") from exc
    (frame,) = writer.chunks(framed=True)
    return frame  # type: ignore[return-value]


def decode_response(
    api_key: int, api_version: int, frame: bytes | bytearray | memoryview
) -> tuple[int, dict[str, Any]]:
    """Decode a response frame (without its size prefix): correlation id and body.

    Records fields are zero-copy ``memoryview`` slices of ``frame``. An
    ApiVersions response that does not parse at ``api_version`` is re-read as v0
    (KIP-511: the broker did not serve our version and says which it does); if
    that fails too but the error code says UNSUPPORTED_VERSION, the body is that
    error with no api ranges (the client then falls back to v0). Bytes after a
    complete body are an error in classic versions; in flexible versions they
    are ignored (but for ApiVersions, whose v0 fallback must be told apart), as
    the Java client and librdkafka do (flexible versions exist
    so that old readers can skip what they do not know, and librdkafka's mock
    cluster writes one byte too many after flexible Metadata bodies).
    Raises :class:`CorruptResponseError` when the frame does not parse.
    """
    compiled = _CLIENT_SCHEMAS.get((api_key, api_version))
    if compiled is not None:
        _, schema, header_flexible = compiled
    else:
        try:
            schema = schema_for(api_key, api_version, "response")
        except KeyError:
            raise ValueError(f"no response schema for api key {api_key}") from None
        header_flexible = response_header_flexible(api_key, schema.flexible)
    reader = Reader(frame)
    correlation_id = -1
    try:
        correlation_id = read_response_header(reader, header_flexible)
        if schema.flexible and api_key != ApiKey.API_VERSIONS:  # see the docstring
            return correlation_id, schema.read(reader)
        return correlation_id, _read_all(schema, reader)
    except ProtocolDecodeError as exc:
        if api_key != ApiKey.API_VERSIONS or api_version == 0 or reader.end < 4:
            raise CorruptResponseError(f"{schema.name} v{api_version}: {exc}") from exc
        error = exc
    reader.pos = 4
    try:
        return correlation_id, _read_all(API_VERSIONS_RESPONSE.schema(0), reader)
    except ProtocolDecodeError as exc:
        if reader.end >= 6 and _I16.unpack_from(reader.buf, 4)[0] == _UNSUPPORTED_VERSION:
            # Refused, in a layout neither v0 nor ours (librdkafka's mock cluster answers
            # a flexible request so): no range given, so the client falls back to v0.
            return correlation_id, {"error_code": _UNSUPPORTED_VERSION, "api_keys": []}
        raise CorruptResponseError(f"{schema.name} v{api_version}: {error}") from exc


def _read_all(schema: CompiledStruct, reader: Reader) -> dict[str, Any]:
    body = schema.read(reader)
    if reader.pos != reader.end:
        raise ProtocolDecodeError(f"{reader.end - reader.pos} trailing bytes")
    return body
