"""Signed internal REST requests (KIP-507), used when the group agreed on ``sessioned``.

The leader writes a random session key to the config topic; every worker
reads it from there. A worker sending an internal request (the task configs
its connector generated, ``POST /connectors/{c}/tasks``) signs the exact body
bytes with HMAC-SHA256 under that key; the leader checks the signature before
it writes anything. Kafka Connect's header names, so requests between Sluice
and Java workers are understood: ``X-Connect-Authorization`` (base64 of the
HMAC) and ``X-Connect-Request-Signature-Algorithm``.

Missing signature: 400; a wrong one (or another key): 403, as in Kafka. The
leader writes a new key once the current one is ``inter.worker.key.ttl.ms``
old; a request signed with the previous key is then refused (403) and its
sender retries with the new one. ``inter.worker.signature.algorithm`` and
``inter.worker.verification.algorithms`` take Java's Mac names (HmacSHA1,
HmacSHA256, HmacSHA384, HmacSHA512).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

from connect_worker.herder.api import BadRequestError, HerderError
from connect_worker.storage.config_records import SessionKey

SIGNATURE_HEADER = "X-Connect-Authorization"
ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"
ALGORITHM = "HmacSHA256"
#: Java's Mac algorithm names and the hash each one uses.
ALGORITHMS = {
    "HmacSHA1": hashlib.sha1,
    "HmacSHA256": hashlib.sha256,
    "HmacSHA384": hashlib.sha384,
    "HmacSHA512": hashlib.sha512,
}
_KEY_BYTES = 32


class ForbiddenError(HerderError):
    """An internal request whose signature does not match the session key."""

    http_status = 403


def new_session_key(algorithm: str = ALGORITHM, size_bytes: int = _KEY_BYTES) -> SessionKey:
    """A fresh random key for the leader to publish."""
    return SessionKey(secrets.token_bytes(size_bytes), algorithm, int(time.time() * 1000))


def key_expired(key: SessionKey, ttl_ms: int, now_ms: int | None = None) -> bool:
    """Whether ``key`` has lived ``inter.worker.key.ttl.ms``."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return now >= key.creation_timestamp_ms + ttl_ms


def signature_headers(
    key: SessionKey, body: bytes, algorithm: str = ALGORITHM
) -> dict[str, str]:
    """The headers that sign ``body`` under ``key`` with Java's Mac ``algorithm``."""
    digest = hmac.new(key.key, body, ALGORITHMS[algorithm]).digest()
    return {SIGNATURE_HEADER: base64.b64encode(digest).decode(), ALGORITHM_HEADER: algorithm}


def verify(
    key: SessionKey | None,
    body: bytes,
    headers: Mapping[str, str],
    accepted: tuple[str, ...] = (ALGORITHM,),
) -> None:
    """Raise 400 for a missing signature or an algorithm not ``accepted``, 403 for a
    wrong signature; return if it matches."""
    given = headers.get(SIGNATURE_HEADER) or headers.get(SIGNATURE_HEADER.lower())
    algorithm = headers.get(ALGORITHM_HEADER) or headers.get(ALGORITHM_HEADER.lower())
    if not given:
        raise BadRequestError("Internal request missing required signature")
    if algorithm not in accepted or algorithm not in ALGORITHMS:
        raise BadRequestError(
            f"Internal request signed with unsupported algorithm {algorithm!r}; this "
            f"worker accepts {', '.join(accepted)} (inter.worker.verification.algorithms)"
        )
    if key is None:
        raise ForbiddenError("Internal request signature cannot be checked: no session key yet")
    expected = signature_headers(key, body, algorithm)[SIGNATURE_HEADER]
    if not hmac.compare_digest(expected, given):
        raise ForbiddenError("Internal request contained invalid signature.")


# -- requests a worker makes on its own behalf ---------------------------------------------
#
# With the REST API behind basic authentication, a request a follower forwards for
# a user carries that user's ``Authorization`` header, as in Kafka Connect. A worker
# also writes on its own behalf (its pipeline watcher's files, forwarded to the
# leader) and has no user's credentials then: it signs the request instead, under
# the same session key, over the method, the path with its query, a timestamp and
# the body, so that a signature fits one request only and for a few minutes.

WORKER_SIGNATURE_HEADER = "X-Sluice-Worker-Authorization"
#: A signed worker request older (or newer) than this is refused.
WORKER_SIGNATURE_MAX_AGE_MS = 5 * 60 * 1000


def _worker_digest(key: SessionKey, stamp_ms: int, method: str, target: bytes, body: bytes) -> str:
    message = f"{stamp_ms}\n{method.upper()}\n".encode() + target + b"\n" + body
    return base64.b64encode(hmac.new(key.key, message, hashlib.sha256).digest()).decode()


def worker_signature_header(
    key: SessionKey, method: str, target: bytes, body: bytes, now_ms: int | None = None
) -> dict[str, str]:
    """The header signing one request (``target``: the path and query as sent)."""
    stamp_ms = int(time.time() * 1000) if now_ms is None else now_ms
    digest = _worker_digest(key, stamp_ms, method, target, body)
    return {WORKER_SIGNATURE_HEADER: f"{stamp_ms}:{digest}"}


def worker_signature_valid(
    key: SessionKey | None,
    method: str,
    target: bytes,
    body: bytes,
    header: str,
    now_ms: int | None = None,
) -> bool:
    """Whether ``header`` signs exactly this request under ``key``, recently."""
    stamp, _, given = header.partition(":")
    if key is None or not stamp.isdigit() or not given:
        return False
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now - int(stamp)) > WORKER_SIGNATURE_MAX_AGE_MS:
        return False
    expected = _worker_digest(key, int(stamp), method, target, body)
    return hmac.compare_digest(expected, given)
