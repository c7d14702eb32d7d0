"""The client side of TLS and SASL: the ``ssl.SSLContext`` for a config and the
SaslHandshake/SaslAuthenticate exchange (PLAIN, SCRAM-SHA-256/512 via scramp).

Authentication failures raise SASL_AUTHENTICATION_FAILED with the broker's
message (never the password); they are not retriable.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

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


if TYPE_CHECKING:
    from log_engine.client.connection import BrokerConnection


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


def ssl_context(config: ClientConfig) -> ssl.SSLContext | None:
    """The TLS context for SSL / SASL_SSL (:mod:`log_engine.client.tls`), else ``None``."""
    if config.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    return client_context(config)


async def authenticate(conn: BrokerConnection, config: ClientConfig) -> None:
    """Run SASL on a fresh connection (after ApiVersions), or raise a KafkaError."""
    mechanism = config.sasl_mechanism
    user, password = config.sasl_credentials()
    where = f"{conn.host}:{conn.port}"
    body = await conn.send(ApiKey.SASL_HANDSHAKE, {"mechanism": mechanism}, version=1)
    if body["error_code"]:
        raise errors.kafka_error(
            body["error_code"],
            f"{where} does not accept SASL mechanism {mechanism} "
            f"(enabled: {', '.join(body['mechanisms']) or 'none'})",
        )
    if mechanism == "PLAIN":
        await _step(conn, b"\x00" + user.encode() + b"\x00" + password.encode(), where)
        return
    client = ScramClient([mechanism], user, password)
    try:
        first = await _step(conn, client.get_client_first().encode(), where)
        client.set_server_first(first.decode())
        final = await _step(conn, client.get_client_final().encode(), where)
        client.set_server_final(final.decode())
    except ScramException as exc:
        raise errors.kafka_error(
            ErrorCode.SASL_AUTHENTICATION_FAILED,
            f"{where}: SCRAM exchange failed ({exc}); is the broker the one you expect?",
        ) from None


async def _step(conn: BrokerConnection, token: bytes, where: str) -> bytes:
    body = await conn.send(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token})
    if body["error_code"]:
        raise errors.kafka_error(
            body["error_code"], f"{where}: {body.get('error_message') or 'authentication failed'}"
        )
    auth_bytes: bytes = body["auth_bytes"]
    return auth_bytes
