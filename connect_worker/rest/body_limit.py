"""Bound the size of REST request bodies (``rest.request.max.bytes``).

Kafka Connect reads any body whole; a 10 MB connector name would then be
parsed, validated and logged. :class:`BodyLimit` answers 413 with Kafka
Connect's error body before reading a body that is too large: at once when
``Content-Length`` says so, and, for a chunked body (no length), as soon as
the bytes received pass the limit.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from connect_worker.rest.errors import error_response

DEFAULT_MAX_BYTES = 1 << 20


def too_large(max_bytes: int) -> str:
    """The 413 message, naming the limit and its key."""
    return (
        f"The request body is larger than {max_bytes} bytes, the limit set by the worker's "
        "rest.request.max.bytes"
    )


class BodyLimit:
    """ASGI middleware: 413 for a request body of more than ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            if length.isdigit():
                response = error_response(413, too_large(self.max_bytes))
            else:
                response = error_response(400, "Invalid Content-Length header")
            await response(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:  # a chunked body: no length announced
                    raise HTTPException(413, too_large(self.max_bytes))
            return message

        await self.app(scope, counted, send)
