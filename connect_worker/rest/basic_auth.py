"""Basic authentication in front of the whole REST API, as Kafka Connect's
BasicAuthSecurityRestExtension does it (``rest.extension.classes``).

:class:`BasicAuth` is the outermost ASGI middleware: a request without
``Authorization: Basic ...`` of a known user and password is answered 401,
with ``WWW-Authenticate: Basic`` (so a browser asks for a login, and the
console at ``/ui`` works), before any handler runs and before its body is
read. Every path is behind it, ``/health``, ``/metrics``, ``/docs`` and the
console included, as in Connect (whose filter covers every resource).

Let through without credentials, as Connect does:

- ``POST /connectors/{c}/tasks``, the internal request a worker sends to
  publish its connector's task configs; its handler checks the KIP-507
  signature when the group is ``sessioned`` (:mod:`~connect_worker.herder.request_signing`);
- a request another worker signed for itself with the session key (its
  watcher's writes forwarded to the leader): the body is read, bounded by
  ``max_bytes``, only for a request that carries that signature, and the
  herder checks it (:meth:`~connect_worker.herder.api.Herder.verify_worker_request`).

The ``Authorization`` header of an accepted request is kept in
:data:`~connect_worker.herder.forwarding.CALLER_AUTHORIZATION`, so a follower
forwards the user's credentials to the leader. Failed logins are logged at
DEBUG (user name, never the password), as Connect logs them.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from connect_worker.herder.forwarding import CALLER_AUTHORIZATION
from connect_worker.herder.request_signing import WORKER_SIGNATURE_HEADER
from connect_worker.rest.errors import error_response
from connect_worker.security.jaas_file import RestUsers

log = logging.getLogger(__name__)

UNAUTHORIZED = "User cannot access the resource."
REALM = "Sluice"
_INTERNAL_TASKS = re.compile(r"/?connectors/[^/]+/tasks/?")
_WORKER_HEADER = WORKER_SIGNATURE_HEADER.lower().encode()


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """(user, password) of an ``Authorization: Basic`` header; None if malformed."""
    if not header:
        return None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, colon, password = decoded.partition(":")
    if not colon or not user:
        return None
    return user, password


class BasicAuth:
    """ASGI middleware: 401 unless the request is authenticated (module doc)."""

    def __init__(self, app: ASGIApp, users: RestUsers, max_bytes: int) -> None:
        self.app = app
        self.users = users
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        method = scope.get("method", "GET")
        if method == "POST" and _INTERNAL_TASKS.fullmatch(scope.get("path", "")):
            await self.app(scope, receive, send)  # signed (KIP-507), checked by its handler
            return
        raw = headers.get(b"authorization")
        header = raw.decode("latin-1") if raw is not None else None
        credentials = basic_credentials(header)
        if credentials is not None and self.users.check(*credentials):
            token = CALLER_AUTHORIZATION.set(header)
            try:
                await self.app(scope, receive, send)
            finally:
                CALLER_AUTHORIZATION.reset(token)
            return
        signature = headers.get(_WORKER_HEADER)
        if signature is not None and credentials is None:
            replay = await self._signed_by_worker(scope, receive, signature.decode("latin-1"))
            if replay is not None:
                await self.app(scope, replay, send)
                return
        if scope["type"] == "websocket":  # no handshake for a stranger
            log.debug("websocket %s: failed authentication", scope.get("path"))
            await send({"type": "websocket.close", "code": 1008})
            return
        log.debug(
            "%s %s: failed authentication (%s)",
            method,
            scope.get("path"),
            f"user {credentials[0]!r}" if credentials else "no valid credentials",
        )
        response = error_response(
            401, UNAUTHORIZED, {"WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8"'}
        )
        await response(scope, receive, send)

    async def _signed_by_worker(
        self, scope: Scope, receive: Receive, signature: str
    ) -> Receive | None:
        """Read the body and check the worker's signature; a receive replaying the body."""
        herder = getattr(scope.get("app"), "state", None)
        herder = getattr(herder, "herder", None) if herder is not None else None
        if herder is None or scope["type"] != "http":
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        target = scope.get("raw_path") or scope.get("path", "").encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        if not herder.verify_worker_request(scope["method"], target, body, signature):
            return None
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay
