"""The per-connection gate of a secured listener.

On a SASL listener only ApiVersions, SaslHandshake and SaslAuthenticate are
served before authentication; any other request closes the connection (as
Kafka does). A failed login is answered with SASL_AUTHENTICATION_FAILED (58)
and Kafka's message after ``connection.failed.authentication.delay.ms``, then
the connection closes; the log line names peer, user and mechanism, never the
password. The principal is ``User:<name>`` after SASL, ``User:CN=...,O=...``
from a verified client certificate on an SSL listener (or the name
``ssl.principal.mapping.rules`` maps the subject to), else ``User:ANONYMOUS``.
A certificate subject no mapping rule applies to closes the connection at its
first request, as Kafka fails such an authentication.

With ``connections.max.reauth.ms`` set, a SASL session expires: a SaslHandshake
between requests starts a re-authentication (KIP-368) that goes through this
gate like the first login, and any other request after expiry closes the
connection (:mod:`.reauthentication`).
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

from log_engine.broker.security.listener_security import ListenerSecurity
from log_engine.broker.security.sasl_session import (
    SASL_AUTHENTICATION_FAILED,
    AuthenticationFailed,
    SaslSession,
)
from log_engine.protocol import ApiKey, RequestHeader

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_DN_NAMES = {
    "commonName": "CN",
    "organizationalUnitName": "OU",
    "organizationName": "O",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "countryName": "C",
    "domainComponent": "DC",
    "emailAddress": "EMAILADDRESS",
    "streetAddress": "STREET",
    "userId": "UID",
}


class UnauthenticatedRequest(ConnectionError):
    """A request before authentication, or a failed login: the connection closes."""


def tls_principal(peercert: dict[str, Any] | None) -> str | None:
    """``User:<RFC 2253 subject>`` of a verified client certificate (Kafka's default
    principal builder), most specific part first: ``User:CN=alice,O=Example``."""
    if not peercert or not peercert.get("subject"):
        return None
    parts = []
    for rdn in reversed(peercert["subject"]):
        parts.append("+".join(f"{_DN_NAMES.get(k, k)}={_escape(v)}" for k, v in rdn))
    return "User:" + ",".join(parts)


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;=' else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    return out


class ConnectionAuth:
    """Authentication state of one connection on a secured listener."""

    def __init__(self, security: ListenerSecurity, tls_principal: str | None) -> None:
        self._security = security
        self._sasl = SaslSession(security) if security.sasl else None
        self._unmapped: str | None = None  # a certificate subject no rule applies to
        if tls_principal is not None and self._sasl is None:
            subject = tls_principal.removeprefix("User:")
            name = security.principal_mapper.name(subject)
            if name is None:
                self._unmapped, tls_principal = subject, None
            else:
                tls_principal = "User:" + name
        self._tls_principal = tls_principal

    @property
    def principal(self) -> str:
        if self._sasl is not None:
            return self._sasl.principal
        return self._tls_principal or "User:ANONYMOUS"

    def intercepts(self, header: RequestHeader) -> bool:
        """Whether :meth:`serve` answers this request (a login or a re-login) rather
        than its handler; raises :class:`UnauthenticatedRequest` (the connection
        closes) when the session has expired and this is not a re-authentication."""
        if self._unmapped is not None:
            return True  # serve() refuses it
        if self._sasl is None:
            return False
        if not self._sasl.authenticated:
            return True
        if header.api_key == ApiKey.SASL_HANDSHAKE:
            return True
        if self._sasl.session.expired():
            self._security.stats.expired_connections_killed += 1
            raise UnauthenticatedRequest(
                f"SASL session of {self._sasl.principal} expired "
                "(connections.max.reauth.ms) and the client did not re-authenticate "
                f"before {ApiKey(header.api_key).name}"
            )
        return False

    @property
    def expects_raw_token(self) -> bool:
        return self._sasl is not None and self._sasl.raw_tokens and not self._sasl.authenticated

    async def serve(
        self, header: RequestHeader, body: dict[str, Any], peer: str
    ) -> tuple[dict[str, Any], bool] | None:
        """Answer a request before authentication: ``(response, close_after)``, or
        ``None`` for ApiVersions (served as usual)."""
        if self._unmapped is not None:
            log.info(
                "refused TLS client %s: no rule of ssl.principal.mapping.rules (%s) applies "
                "to its certificate subject %s",
                peer,
                self._security.principal_mapper.text,
                self._unmapped,
            )
            raise UnauthenticatedRequest(f"no principal mapping rule applies to {self._unmapped}")
        assert self._sasl is not None
        api = header.api_key
        if api == ApiKey.API_VERSIONS and not self._sasl.exchanging:
            return None  # before the SaslHandshake only, as Kafka's SaslServerAuthenticator
        if api == ApiKey.SASL_HANDSHAKE:
            was_authenticated = self._sasl.authenticated
            response = self._sasl.handshake(body["mechanism"], header.api_version)
            if response["error_code"] and self._sasl.refusal:
                self._security.stats.failed_reauthentications += 1
                log.info("re-authentication refused for %s: %s", peer, self._sasl.refusal)
            elif response["error_code"] and was_authenticated:
                log.info(
                    "connection from %s sent SaslHandshake after authenticating "
                    "(re-authentication is off: connections.max.reauth.ms=0)",
                    peer,
                )
            elif response["error_code"]:
                log.info(
                    "connection from %s asked for SASL mechanism %r (enabled: %s)",
                    peer,
                    body["mechanism"],
                    ",".join(self._security.mechanisms),
                )
            return response, bool(response["error_code"])
        if api == ApiKey.SASL_AUTHENTICATE:
            phase = self._sasl.phase
            try:
                token = self._sasl.authenticate(body["auth_bytes"])
            except AuthenticationFailed as exc:
                await self._failed(peer, exc, phase)
                return {
                    "error_code": SASL_AUTHENTICATION_FAILED,
                    "error_message": str(exc),
                    "auth_bytes": b"",
                    "session_lifetime_ms": 0,
                }, True
            self._succeeded(peer, phase)
            return {
                "error_code": 0,
                "error_message": None,
                "auth_bytes": token,
                "session_lifetime_ms": (
                    self._sasl.session_lifetime_ms if self._sasl.authenticated else 0
                ),
            }, False
        if self._sasl.reauthenticating:
            raise UnauthenticatedRequest(
                f"{ApiKey(api).name} (api key {api}) during SASL re-authentication"
            )
        when = "during" if self._sasl.exchanging else "before"
        raise UnauthenticatedRequest(
            f"{ApiKey(api).name} (api key {api}) {when} SASL authentication"
        )

    async def raw_token(self, frame: memoryview, peer: str) -> bytes:
        """A bare SASL token after a v0 SaslHandshake; the answer goes back size-prefixed."""
        assert self._sasl is not None
        phase = self._sasl.phase
        try:
            token = self._sasl.authenticate(bytes(frame))
        except AuthenticationFailed as exc:
            await self._failed(peer, exc, phase)
            raise UnauthenticatedRequest("") from None
        self._succeeded(peer, phase)
        return _SIZE.pack(len(token)) + token

    async def _failed(self, peer: str, exc: AuthenticationFailed, phase: str) -> None:
        assert self._sasl is not None
        stats = self._security.stats
        if phase == "re-authentication":
            stats.failed_reauthentications += 1
        else:
            stats.failed_authentications += 1
        log.info(
            "failed %s from %s (user %r, mechanism %s): %s",
            phase,
            peer,
            self._sasl.username_hint,
            self._sasl.mechanism_name,
            exc,
        )
        if self._security.failed_auth_delay_ms:
            await asyncio.sleep(self._security.failed_auth_delay_ms / 1000)

    def _succeeded(self, peer: str, phase: str) -> None:
        assert self._sasl is not None
        if not self._sasl.authenticated:
            return  # more tokens to come
        stats = self._security.stats
        if phase == "re-authentication":
            stats.successful_reauthentications += 1
        else:
            stats.successful_authentications += 1
        log.debug(
            "%s: %s as %s with %s; session lifetime %d ms",
            peer,
            phase,
            self.principal,
            self._sasl.mechanism_name,
            self._sasl.session_lifetime_ms,
        )
