"""Forwarding a REST write to the worker that must carry it out (usually the leader).

In distributed mode only the leader writes the config topic, as in Kafka
Connect: a follower sends the same REST request to the leader's advertised
url and hands back its answer. The leader's errors come back as the same
:class:`~connect_worker.herder.api.HerderError` (same status, same message).
Requests carry the header ``X-Sluice-Forwarded`` (for the receiver's logs and
proxies); internal ones are signed when the group is ``sessioned`` (KIP-507).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from connect_worker.herder.api import (
    BadRequestError,
    ConflictError,
    HerderError,
    NotFoundError,
)
from connect_worker.herder.request_signing import ALGORITHM, signature_headers
from connect_worker.storage.config_records import SessionKey

FORWARDED_HEADER = "X-Sluice-Forwarded"
REBALANCE_MESSAGE = (
    "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)
_TIMEOUT_S = 90.0  # Kafka Connect's request timeout


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


def forward(
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
    content = None if body is None else json.dumps(body).encode()
    headers = {FORWARDED_HEADER: "1", "Content-Type": "application/json"}
    if signing_key is not None and content is not None:
        headers.update(signature_headers(signing_key, content, signing_algorithm))
    try:
        response = httpx.request(
            method, url, content=content, params=query, timeout=_TIMEOUT_S, headers=headers
        )
    except httpx.HTTPError as exc:
        raise ForwardingError(f"forwarding {method} {path} to {base_url} failed: {exc}") from exc
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
