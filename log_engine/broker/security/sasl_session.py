"""One connection's SASL exchange: SaslHandshake, then the mechanism's tokens.

Tokens come inside SaslAuthenticate requests (handshake v1) or as bare frames
(handshake v0). PLAIN checks ``authzid\\0user\\0password`` against the JAAS
users; SCRAM-SHA-256/512 run RFC 5802 through ``scramp`` against the salted
store. An unknown SCRAM user gets the same exchange as a known one with a
wrong password (no user enumeration). Failures carry Kafka's messages;
passwords are never logged.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from typing import Protocol

from scramp import ScramException, ScramMechanism

from log_engine.broker.security.listener_security import ListenerSecurity
from log_engine.broker.security.reauthentication import SessionClock
from log_engine.broker.security.scram_store import ScramCredential

log = logging.getLogger(__name__)

UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58
MIN_REAUTH_INTERVAL_S = 1.0

_DUMMY: dict[str, ScramCredential] = {}


class AuthenticationFailed(Exception):
    """The client's credentials are wrong; the message is what the client is told."""


class _Mechanism(Protocol):
    complete: bool
    username: str

    def step(self, token: bytes) -> bytes: ...


class _Plain:
    def __init__(self, users: dict[str, str]) -> None:
        self._users = users
        self.complete = False
        self.username = ""

    def step(self, token: bytes) -> bytes:
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise AuthenticationFailed("Authentication failed: invalid SASL/PLAIN message")
        authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
        if authzid and authzid != user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        self.username = user
        expected = self._users.get(user)
        # compare_digest on both paths: the timing does not tell known users apart
        ok = hmac.compare_digest(
            (expected or "\x00unknown").encode(), password.encode()
        )
        if expected is None or not ok:
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        self.complete = True
        return b""


def _dummy_credential(mechanism: str) -> ScramCredential:
    if mechanism not in _DUMMY:
        _DUMMY[mechanism] = ScramCredential.from_password(mechanism, os.urandom(16).hex())
    return _DUMMY[mechanism]


def _decode_saslname(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


class _Scram:
    def __init__(self, mechanism: str, security: ListenerSecurity, phase: str) -> None:
        self._mechanism = mechanism
        self._phase = phase  # "authentication" or "re-authentication", for the message
        store = security.scram
        assert store is not None

        def auth_info(user: str) -> tuple[bytes, bytes, bytes, int]:
            self.username = _decode_saslname(user)
            credential = store.get(mechanism, self.username)
            return (credential or _dummy_credential(mechanism)).auth_info()

        self._server = ScramMechanism(mechanism).make_server(auth_info)
        self._round = 0
        self.complete = False
        self.username = ""

    def step(self, token: bytes) -> bytes:
        try:
            if self._round == 0:
                self._round = 1
                self._server.set_client_first(token.decode("utf-8"))
                return self._server.get_server_first().encode()
            if self._round == 1:
                self._round = 2
                final_message = token.decode("utf-8")
                self._accept_librdkafka_nonce(final_message)
                self._server.set_client_final(final_message)
                final = self._server.get_server_final().encode()
                self.complete = True
                return final
        except (ScramException, UnicodeDecodeError) as exc:
            log.debug("SCRAM exchange failed: %s", exc)
        raise AuthenticationFailed(
            f"Authentication failed during {self._phase} due to invalid credentials "
            f"with SASL mechanism {self._mechanism}"
        )


    def _accept_librdkafka_nonce(self, final_message: str) -> None:
        """librdkafka before 2.6.1 (kcat 1.7 ships 2.0.2) sends ``r=`` as client
        nonce + the full server nonce (its client nonce twice). Kafka 3.8.1-3.9
        accept it; so do we, for exactly that shape: the server nonce is still
        checked and the proof covers the message as sent."""
        server = self._server
        expected = str(server.nonce)
        client_nonce = expected[: -len(str(server.s_nonce))]
        for part in final_message.split(","):
            if part.startswith("r=") and part[2:] == client_nonce + expected:
                server.nonce = type(server.nonce)(part[2:])


class SaslSession:
    """The SASL state of one connection on a SASL listener.

    After a login, a SaslHandshake starts a re-authentication (KIP-368) when the
    session has a lifetime: :attr:`authenticated` is False until it completes,
    and it must end with the same mechanism and principal.
    """

    def __init__(self, security: ListenerSecurity) -> None:
        self._security = security
        self._mechanism: _Mechanism | None = None
        self.raw_tokens = False
        """True after a v0 handshake: the next frames are bare SASL tokens."""
        self.authenticated = False
        self.principal = "User:ANONYMOUS"
        self.mechanism_name = ""
        self.reauthenticating = False
        """True between a re-authentication's SaslHandshake and its last token."""
        self.session = SessionClock()
        self.session_lifetime_ms = 0
        """What the last completed login told the client (0: the session never expires)."""
        self.refusal = ""
        """Why the last handshake was refused, for the log (empty: the usual reasons)."""
        self._reauth_started: float | None = None  # time.monotonic() of the last one

    @property
    def exchanging(self) -> bool:
        """Between a SaslHandshake and the exchange's last token (a login or a re-login)."""
        return self._mechanism is not None and not self.authenticated

    @property
    def phase(self) -> str:
        """``authentication`` or ``re-authentication`` (Kafka's words in messages)."""
        return "re-authentication" if self.reauthenticating else "authentication"

    def handshake(self, mechanism: str, version: int) -> dict[str, object]:
        """Answer SaslHandshake; an error code means the connection closes after it."""
        enabled = list(self._security.mechanisms)
        name = mechanism.upper()
        if self.authenticated and self.session.expires and self._may_reauthenticate():
            return self._begin_reauthentication(name, version)
        if self._mechanism is not None or self.authenticated:
            return {"error_code": ILLEGAL_SASL_STATE, "mechanisms": enabled}
        if name not in enabled:
            return {"error_code": UNSUPPORTED_SASL_MECHANISM, "mechanisms": enabled}
        self.mechanism_name = name
        self._start(name, version)
        return {"error_code": 0, "mechanisms": enabled}

    def _may_reauthenticate(self) -> bool:
        """At most one re-authentication a second (Kafka's limit: a client cannot
        make the broker run exchanges back to back on one connection)."""
        now = time.monotonic()
        if self._reauth_started is not None and now - self._reauth_started < MIN_REAUTH_INTERVAL_S:
            self.refusal = "re-authentication less than a second after the previous one"
            return False
        self._reauth_started = now
        return True

    def _begin_reauthentication(self, name: str, version: int) -> dict[str, object]:
        if name != self.mechanism_name:
            self.refusal = (
                f"SASL mechanism {name!r} requested by client is not supported for "
                f"re-authentication of mechanism {self.mechanism_name!r}"
            )
            return {"error_code": UNSUPPORTED_SASL_MECHANISM, "mechanisms": [self.mechanism_name]}
        self.authenticated = False
        self.reauthenticating = True
        self._start(name, version)
        return {"error_code": 0, "mechanisms": list(self._security.mechanisms)}

    def _start(self, name: str, version: int) -> None:
        self._mechanism = (
            _Plain(self._security.plain_users)
            if name == "PLAIN"
            else _Scram(name, self._security, self.phase)
        )
        self.raw_tokens = version == 0

    def authenticate(self, token: bytes) -> bytes:
        """One token of the exchange; raises :class:`AuthenticationFailed`."""
        if self._mechanism is None or self.authenticated:
            raise AuthenticationFailed(
                "Unexpected SaslAuthenticate: no SaslHandshake before, or already authenticated"
            )
        answer = self._mechanism.step(token)
        if self._mechanism.complete:
            principal = f"User:{self._mechanism.username}"
            if self.reauthenticating and principal != self.principal:
                raise AuthenticationFailed(
                    "Cannot change principals during re-authentication from "
                    f"{_dotted(self.principal)}: {_dotted(principal)}"
                )
            self.authenticated = True
            self.reauthenticating = False
            self.raw_tokens = False
            self.principal = principal
            self.session_lifetime_ms = self.session.start(
                self._security.max_reauth_ms.get(self.mechanism_name, 0)
            )
        return answer

    @property
    def username_hint(self) -> str:
        """The user the client claimed so far (for failure logs; never the password)."""
        return self._mechanism.username if self._mechanism else ""


def _dotted(principal: str) -> str:
    """``User:alice`` as Kafka's message writes it: ``User.alice``."""
    return principal.replace(":", ".", 1)
