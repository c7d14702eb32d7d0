"""Session lifetimes and re-authentication (KIP-368) on a SASL listener.

``connections.max.reauth.ms`` (default 0: sessions never expire) bounds how
long one SASL login is good for. It may be set per listener and mechanism as
``listener.name.<listener>.<mechanism lower-case>.connections.max.reauth.ms``,
per listener as ``listener.name.<listener>.connections.max.reauth.ms``, or
bare; the most specific wins (Kafka's override rule).

A successful SaslAuthenticate (v1+) tells the client the session's lifetime
(``session_lifetime_ms``, the setting; a credential lifetime would lower it,
none of our mechanisms has one). Once the session has expired, the next
request that does not start a re-authentication closes the connection, as
Kafka's broker does (old clients that cannot re-authenticate are disconnected).
A client re-authenticates on the same connection by sending SaslHandshake and
SaslAuthenticate again between requests; it must keep its mechanism and its
principal (else the connection closes with Kafka's error message).

:class:`AuthenticationStats` counts logins and re-authentications per
listener, for ``GET /metrics`` (Kafka's ``socket-server-metrics``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_REAUTH_KEY = "connections.max.reauth.ms"


class ReauthConfigError(ValueError):
    """``connections.max.reauth.ms`` is not a non-negative integer."""


def max_reauth_ms_by_mechanism(
    listener_name: str, mechanisms: Sequence[str], settings: Mapping[str, str]
) -> dict[str, int]:
    """Per enabled mechanism, the session lifetime bound in ms (0: no expiry)."""
    prefix = f"listener.name.{listener_name.lower()}."
    out: dict[str, int] = {}
    for mechanism in mechanisms:
        for key in (
            f"{prefix}{mechanism.lower()}.{MAX_REAUTH_KEY}",
            prefix + MAX_REAUTH_KEY,
            MAX_REAUTH_KEY,
        ):
            text = settings.get(key)
            if text is not None:
                break
        else:
            out[mechanism] = 0
            continue
        text = text.strip()
        if not text.isdigit():
            raise ReauthConfigError(f"{key}={text!r} is not a non-negative integer (ms)")
        out[mechanism] = int(text)
    return out


@dataclass
class AuthenticationStats:
    """One listener's counters (Kafka's ``socket-server-metrics`` names them)."""

    successful_authentications: int = 0
    failed_authentications: int = 0
    successful_reauthentications: int = 0
    failed_reauthentications: int = 0
    expired_connections_killed: int = 0


class SessionClock:
    """When one connection's SASL session expires (``None``: never)."""

    def __init__(self) -> None:
        self.expires_at: float | None = None  # time.monotonic()

    def start(self, lifetime_ms: int) -> int:
        """A login (or re-login) just completed; returns ``session_lifetime_ms``."""
        self.expires_at = time.monotonic() + lifetime_ms / 1000 if lifetime_ms > 0 else None
        return lifetime_ms

    @property
    def expires(self) -> bool:
        """Whether this session has a lifetime, so a client may re-authenticate."""
        return self.expires_at is not None

    def expired(self) -> bool:
        return self.expires_at is not None and time.monotonic() > self.expires_at
