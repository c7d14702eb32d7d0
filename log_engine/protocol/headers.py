"""Request headers v1 and v2, response headers v0 and v1.

Request header v1 is ``int16 api_key, int16 api_version, int32 correlation_id,
nullable string client_id``; response header v0 is ``int32 correlation_id``.
Flexible versions use request header v2 (v1 plus a tagged-field section; the
``client_id`` keeps its classic int16 length) and response header v1
(``correlation_id`` plus a tagged-field section), except ApiVersions, whose
response header is always v0 so that any client can read the KIP-511 answer.
The first 8 bytes and ``client_id`` are laid out the same in v1 and v2, so
:func:`read_request_header` names the api and version of any request before
the caller knows whether that version is flexible.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from log_engine.errors import ProtocolDecodeError
from log_engine.protocol.types import EMPTY_TAGGED_FIELDS, Reader, Writer

REQUEST_HEADER_FIXED_SIZE = 8
_API_VERSIONS_KEY = 18
_FIXED = struct.Struct(">hhi")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """The header in front of every request; the broker echoes ``correlation_id``."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def read_request_header(reader: Reader) -> tuple[RequestHeader, bool]:
    """Read a request header v1 (``reader`` must hold at least 8 bytes).

    Returns the header and whether ``client_id`` parsed. When it did not, the
    header still names the api, version and correlation id (client_id None),
    so the caller can refuse the request with a useful error.
    """
    api_key, api_version, correlation_id = reader.unpack(_FIXED)
    start = reader.pos
    try:
        client_id = reader.nullable_string()
    except ProtocolDecodeError:
        reader.pos = start
        return RequestHeader(api_key, api_version, correlation_id, None), False
    return RequestHeader(api_key, api_version, correlation_id, client_id), True


def write_request_header(writer: Writer, header: RequestHeader, flexible: bool = False) -> None:
    """Append a request header v1, or v2 (with an empty tagged-field section) if ``flexible``."""
    writer.buf += _FIXED.pack(header.api_key, header.api_version, header.correlation_id)
    writer.nullable_string(header.client_id)
    if flexible:
        writer.buf += EMPTY_TAGGED_FIELDS


def read_response_header(reader: Reader, flexible: bool = False) -> int:
    """Read a response header v0, or v1 if ``flexible`` (its tagged fields are skipped)."""
    correlation_id = reader.int32()
    if flexible:
        reader.tagged_fields()
    return correlation_id


def write_response_header(writer: Writer, correlation_id: int, flexible: bool = False) -> None:
    """Append a response header v0, or v1 (with an empty tagged-field section) if ``flexible``."""
    writer.int32(correlation_id)
    if flexible:
        writer.buf += EMPTY_TAGGED_FIELDS


def response_header_flexible(api_key: int, body_flexible: bool) -> bool:
    """Whether a response uses header v1: flexible bodies, except ApiVersions (always v0)."""
    return body_flexible and api_key != _API_VERSIONS_KEY
