"""Forwarding a REST write to the worker that must carry it out (usually the leader).

In distributed mode only the leader writes the config topic, as in Kafka
Connect: a follower sends the same REST request to the leader's advertised
url and hands back its answer. The leader's errors come back as the same
:class:`~connect_worker.herder.api.HerderError` (same status, same message).
Requests carry the header ``X-Sluice-Forwarded`` (for the receiver's logs and
proxies); internal ones are signed when the group is ``sessioned`` (KIP-507).

With the REST API behind basic authentication, a forwarded request carries the
``Authorization`` header of the user's request (the REST layer puts it in
:data:`CALLER_AUTHORIZATION`), as Kafka Connect forwards it; a request the
worker makes on its own behalf (its watcher's pipeline files) is signed with
the session key instead (:func:`~.request_signing.worker_signature_header`).
``https://`` urls are reached with the TLS context of the worker's REST
settings (:mod:`connect_worker.security.rest_tls`): its trust store, and its
key store as client certificate.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import httpx

from connect_worker.herder.api import (
    BadRequestError,
    ConflictError,
    HerderError,
    NotFoundError,
)
from connect_worker.herder.request_signing import (
    ALGORITHM,
    signature_headers,
    worker_signature_header,
)
from connect_worker.security.rest_tls import RestTlsSettings
from connect_worker.storage.config_records import SessionKey

FORWARDED_HEADER = "X-Sluice-Forwarded"
REBALANCE_MESSAGE = (
    "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)
_TIMEOUT_S = 90.0  # Kafka Connect's request timeout

#: The ``Authorization`` header of the REST request being served (None: the worker's own).
CALLER_AUTHORIZATION: ContextVar[str | None] = ContextVar("caller_authorization", default=None)


class RebalanceInProgressError(ConflictError):
    """The group is rebalancing (or has no leader yet): Kafka's 409."""

    def __init__(self) -> None:
        super().__init__(REBALANCE_MESSAGE)


class ForwardingError(HerderError):
    """The worker the request was forwarded to did not answer."""

    http_status = 500


_ERRORS: dict[int, type[HerderError]] = {
    400: BadRequestError,
    404: NotFoundError,
    409: ConflictError,
}


class Forwarder:
    """Sends REST requests to other workers (see the module doc).

    ``tls`` is read when the first ``https://`` url is reached; ``session_key``
    gives the key that signs the worker's own requests (None: not signed).
    """

    def __init__(
        self,
        tls: RestTlsSettings | None = None,
        session_key: Callable[[], SessionKey | None] = lambda: None,
    ) -> None:
        self._tls = tls
        self._session_key = session_key
        self._context: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def _verify(self, url: str) -> ssl.SSLContext | bool:
        if not url.startswith("https:"):
            return True
        with self._lock:
            if self._context is None:
                self._context = (self._tls or RestTlsSettings({})).client_context()
            return self._context

    def __call__(
        self,
        method: str,
        base_url: str,
        path: str,
        body: Any = None,
        *,
        signing_key: SessionKey | None = None,
        signing_algorithm: str = ALGORITHM,
        **params: Any,
    ) -> Any:
        """Send the request to ``base_url``; its JSON answer, or its error raised here.

        With ``signing_key`` the body is signed (KIP-507, :mod:`.request_signing`).
        """
        url = base_url.rstrip("/") + path
        query = {k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()}
        content = b"" if body is None else json.dumps(body).encode()
        headers = {FORWARDED_HEADER: "1", "Content-Type": "application/json"}
        if signing_key is not None and body is not None:
            headers.update(signature_headers(signing_key, content, signing_algorithm))
        request = httpx.Request(method, url, params=query, content=content, headers=headers)
        caller = CALLER_AUTHORIZATION.get()
        if caller is not None:
            request.headers["Authorization"] = caller
        elif (key := self._session_key()) is not None:
            request.headers.update(
                worker_signature_header(key, method, request.url.raw_path, content)
            )
        try:
            with httpx.Client(verify=self._verify(url), timeout=_TIMEOUT_S) as client:
                response = client.send(request)
        except (httpx.HTTPError, ssl.SSLError, OSError) as exc:
            raise ForwardingError(
                f"forwarding {method} {path} to {base_url} failed: {exc}"
            ) from exc
        return _answer(response)


def _answer(response: httpx.Response) -> Any:
    """The JSON body of a success; the error it stands for raised otherwise."""
    if response.status_code >= 400:
        try:
            message = response.json().get("message", response.text)
        except ValueError:
            message = response.text
        error = _ERRORS.get(response.status_code)
        if error is None:
            failed = HerderError(message)
            failed.http_status = response.status_code
            raise failed
        raise error(message)
    if not response.content:
        return None
    return response.json()
