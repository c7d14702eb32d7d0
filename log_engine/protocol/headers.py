"""Request header v1 and response header v0: the only headers Sluice speaks.

Request header v1 is ``int16 api_key, int16 api_version, int32 correlation_id,
nullable string client_id``; response header v0 is ``int32 correlation_id``.
Flexible versions would use request header v2 / response header v1 (with tagged
fields); Sluice never advertises them, but the first 8 bytes and the classic
``client_id`` are laid out the same in v2, so :func:`read_request_header` can
still name the api and version of a flexible request in order to refuse it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from log_engine.protocol.errors import ProtocolDecodeError
from log_engine.protocol.types import Reader, Writer

REQUEST_HEADER_FIXED_SIZE = 8
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


def write_request_header(writer: Writer, header: RequestHeader) -> None:
    """Append a request header v1."""
    writer.buf += _FIXED.pack(header.api_key, header.api_version, header.correlation_id)
    writer.nullable_string(header.client_id)


def read_response_header(reader: Reader) -> int:
    """Read a response header v0: the correlation id."""
    return reader.int32()


def write_response_header(writer: Writer, correlation_id: int) -> None:
    """Append a response header v0."""
    writer.int32(correlation_id)
