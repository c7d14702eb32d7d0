"""``connections.max.reauth.ms`` as Kafka reads it: bare, per listener, per
listener and mechanism (the most specific wins); bad values stop the start
with the key; the session lifetime reaches SaslAuthenticate's answer; at
most one re-authentication a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from log_engine.broker.config import BrokerConfig
from log_engine.broker.security import ListenerSecurity, SaslSession, SecurityConfigError

JAAS = 'x.PlainLoginModule required user_alice="alice-secret";'
BASE = {
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "plain.sasl.jaas.config": JAAS,
}


def _security(tmp_path: Path, **settings: str) -> ListenerSecurity:
    return ListenerSecurity.build("EXTERNAL", "SASL_PLAINTEXT", {**BASE, **settings}, tmp_path)


def test_off_by_default(tmp_path: Path) -> None:
    assert _security(tmp_path).max_reauth_ms == {"PLAIN": 0, "SCRAM-SHA-512": 0}


def test_the_most_specific_key_wins(tmp_path: Path) -> None:
    security = _security(
        tmp_path,
        **{
            "connections.max.reauth.ms": "3600000",
            "listener.name.external.connections.max.reauth.ms": "600000",
            "listener.name.external.scram-sha-512.connections.max.reauth.ms": "60000",
            "listener.name.internal.plain.connections.max.reauth.ms": "1",  # another listener
        },
    )
    assert security.max_reauth_ms == {"PLAIN": 600000, "SCRAM-SHA-512": 60000}


def test_a_bad_value_names_its_key(tmp_path: Path) -> None:
    with pytest.raises(SecurityConfigError, match=r"listener\.name\.external\.plain\."
                       r"connections\.max\.reauth\.ms='1h' is not a non-negative integer"):
        _security(tmp_path, **{"listener.name.external.plain.connections.max.reauth.ms": "1h"})


def test_broker_config_keeps_the_keys_for_the_listeners() -> None:
    config = BrokerConfig.from_properties({"connections.max.reauth.ms": "5000"})
    assert config.security_settings == {"connections.max.reauth.ms": "5000"}


def test_lifetime_and_reauthentication_in_the_session(tmp_path: Path) -> None:
    security = _security(tmp_path, **{"connections.max.reauth.ms": "5000"})
    session = SaslSession(security)
    assert session.handshake("PLAIN", 1)["error_code"] == 0
    session.authenticate(b"\x00alice\x00alice-secret")
    assert session.authenticated and session.session_lifetime_ms == 5000
    assert not session.session.expired()
    # a second handshake starts a re-authentication: not authenticated until done
    assert session.handshake("PLAIN", 1)["error_code"] == 0
    assert not session.authenticated and session.phase == "re-authentication"
    session.authenticate(b"\x00alice\x00alice-secret")
    assert session.authenticated and session.principal == "User:alice"
    # at most one re-authentication a second, as Kafka: the next is refused
    assert session.handshake("PLAIN", 1)["error_code"] == 34  # ILLEGAL_SASL_STATE
    assert "less than a second" in session.refusal


def test_without_a_lifetime_a_second_handshake_is_illegal(tmp_path: Path) -> None:
    session = SaslSession(_security(tmp_path))
    session.handshake("PLAIN", 1)
    session.authenticate(b"\x00alice\x00alice-secret")
    assert session.session_lifetime_ms == 0
    assert session.handshake("PLAIN", 1)["error_code"] == 34  # ILLEGAL_SASL_STATE
