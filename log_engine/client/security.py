"""The client side of TLS and SASL: the ``ssl.SSLContext`` for a config and the
SaslHandshake/SaslAuthenticate exchange (PLAIN, SCRAM-SHA-256/512 via scramp).

Authentication failures raise SASL_AUTHENTICATION_FAILED with the broker's
message (never the password); they are not retriable.

A broker with ``connections.max.reauth.ms`` answers the login with a session
lifetime (KIP-368); :func:`reauthentication_delay_s` picks when to log in again
on the same connection: a random point between 85% and 95% of it, as Kafka's
clients do, so connections opened together do not re-authenticate together.
"""

from __future__ import annotations

import random
import ssl
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from scramp import ScramClient, ScramException

from log_engine.client import errors
from log_engine.client.config import ClientConfig
from log_engine.client.tls import client_context
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey


class SslAuthenticationError(errors.KafkaError):
    """The TLS handshake failed (unknown CA, wrong host name, refused client
    certificate): Kafka's SslAuthenticationException, not retriable."""

    message = "SSL_AUTHENTICATION_FAILED"


Send = Callable[[ApiKey, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends one request on the connection being authenticated and returns the answer."""


def is_authentication_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a refused login: a failed TLS handshake or SASL_AUTHENTICATION_FAILED."""
    return isinstance(exc, SslAuthenticationError) or (
        isinstance(exc, errors.KafkaError)
        and exc.errno == ErrorCode.SASL_AUTHENTICATION_FAILED
    )


def describe_security(config: ClientConfig) -> str:
    """``SASL_SSL, SCRAM-SHA-512 as user broker`` (never the password), for log lines."""
    if config.security_protocol.startswith("SASL_"):
        user = config.sasl_username
        if user is None:
            try:
                user = config.sasl_credentials()[0]
            except ValueError:
                user = "?"
        return f"{config.security_protocol}, {config.sasl_mechanism} as user {user}"
    return config.security_protocol


_CONTEXTS: weakref.WeakKeyDictionary[ClientConfig, ssl.SSLContext] = weakref.WeakKeyDictionary()


def ssl_context(config: ClientConfig) -> ssl.SSLContext | None:
    """The TLS context for SSL / SASL_SSL (:mod:`log_engine.client.tls`), else ``None``.

    Built once per config and shared by the client's connections, as Kafka's
    clients build one SSL factory per client: the stores are read and the key
    decrypted once, not at every connection.
    """
    if config.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    context = _CONTEXTS.get(config)
    if context is None:
        context = _CONTEXTS[config] = client_context(config)
    return context


async def authenticate(send: Send, where: str, config: ClientConfig) -> int:
    """Run SASL on a connection (after ApiVersions, or between requests to
    re-authenticate), or raise a KafkaError; returns the broker's
    ``session_lifetime_ms`` (0: the session does not expire)."""
    mechanism = config.sasl_mechanism
    user, password = config.sasl_credentials()
    body = await send(ApiKey.SASL_HANDSHAKE, {"mechanism": mechanism})
    if body["error_code"]:
        raise errors.kafka_error(
            body["error_code"],
            f"{where} does not accept SASL mechanism {mechanism} "
            f"(enabled: {', '.join(body['mechanisms']) or 'none'})",
        )
    if mechanism == "PLAIN":
        answer = await _step(send, b"\x00" + user.encode() + b"\x00" + password.encode(), where)
        return _lifetime_ms(answer)
    client = ScramClient([mechanism], user, password)
    try:
        first = await _step(send, client.get_client_first().encode(), where)
        client.set_server_first(first["auth_bytes"].decode())
        final = await _step(send, client.get_client_final().encode(), where)
        client.set_server_final(final["auth_bytes"].decode())
    except ScramException as exc:
        raise errors.kafka_error(
            ErrorCode.SASL_AUTHENTICATION_FAILED,
            f"{where}: SCRAM exchange failed ({exc}); is the broker the one you expect?",
        ) from None
    return _lifetime_ms(final)


def reauthentication_delay_s(session_lifetime_ms: int) -> float | None:
    """Seconds from now to re-authenticate after, or ``None`` (no lifetime)."""
    if session_lifetime_ms <= 0:
        return None
    return session_lifetime_ms * random.uniform(0.85, 0.95) / 1000


def _lifetime_ms(answer: dict[str, Any]) -> int:
    return int(answer.get("session_lifetime_ms") or 0)


async def _step(send: Send, token: bytes, where: str) -> dict[str, Any]:
    body = await send(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token})
    if body["error_code"]:
        raise errors.kafka_error(
            body["error_code"], f"{where}: {body.get('error_message') or 'authentication failed'}"
        )
    return body
