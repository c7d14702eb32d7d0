"""Security settings: bad ones are refused at start-up with the key to fix,
never echoing a secret; JAAS values parse as Kafka writes them; SCRAM
credentials are stored salted."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tls_certs import TestCA
from log_engine.broker.config import BrokerConfig
from log_engine.broker.security import ListenerSecurity, SecurityConfigError
from log_engine.broker.security.listener_security import bootstrap_scram_users
from log_engine.broker.security.sasl_session import SaslSession
from log_engine.broker.security.scram_store import FILE_NAME, ScramCredentialStore
from log_engine.jaas import JaasConfigError, parse_jaas

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
    '  username="admin" password="admin-secret"\n'
    '  user_admin="admin-secret" user_alice="al\\"ice";'
)


def test_jaas_as_kafka_writes_it() -> None:
    entry = parse_jaas(JAAS)
    assert entry.login_module.endswith("PlainLoginModule") and entry.flag == "required"
    assert entry.options["username"] == "admin"
    assert entry.users() == {"admin": "admin-secret", "alice": 'al"ice'}
    bare = parse_jaas("x.ScramLoginModule required username=bob password=pw;")
    assert bare.options == {"username": "bob", "password": "pw"}


def test_broken_jaas_names_the_key_not_the_value() -> None:
    with pytest.raises(JaasConfigError) as caught:
        parse_jaas('x.PlainLoginModule required user_a="sec-ret;', "k")
    assert "k:" in str(caught.value) and "sec-ret" not in str(caught.value)


@pytest.mark.parametrize(
    ("protocol", "settings", "message"),
    [
        ("SASL_PLAINTEXT", {}, "sasl.enabled.mechanisms"),
        ("SASL_PLAINTEXT", {"sasl.enabled.mechanisms": "GSSAPI"}, "supported are"),
        ("SASL_PLAINTEXT", {"sasl.enabled.mechanisms": "PLAIN"}, "plain.sasl.jaas.config"),
        ("SSL", {}, "ssl.keystore.location"),
        ("SSL", {"ssl.keystore.type": "BKS", "ssl.keystore.location": "/x"}, "one of PEM"),
        ("SSL", {"ssl.keystore.location": "/nonexistent.pem"}, "cannot read ssl.keystore"),
    ],
)
def test_bad_settings_are_refused(
    protocol: str, settings: dict[str, str], message: str, tmp_path: Path
) -> None:
    with pytest.raises(SecurityConfigError, match=message):
        ListenerSecurity.build("L", protocol, settings, tmp_path)


def test_client_auth_needs_a_truststore_and_listener_prefix_wins(tmp_path: Path) -> None:
    server = TestCA(tmp_path / "pki").issue("localhost", server=True)
    settings = {"ssl.keystore.location": str(server.pem), "ssl.client.auth": "required"}
    with pytest.raises(SecurityConfigError, match=r"needs ssl\.truststore"):
        ListenerSecurity.build("EXTERNAL", "SSL", settings, tmp_path)
    settings["listener.name.external.ssl.client.auth"] = "none"
    assert ListenerSecurity.build("EXTERNAL", "SSL", settings, tmp_path).client_auth == "none"


def test_security_keys_reach_the_broker_config_without_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = BrokerConfig.from_properties(
        {
            "listeners": "SASL_SSL://127.0.0.1:9093",
            "ssl.keystore.location": "/x.pem",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
        }
    )
    assert config.listener.protocol == "SASL_SSL"
    assert config.security_settings["ssl.keystore.location"] == "/x.pem"
    assert "unknown broker setting" not in caplog.text


def test_scram_credentials_are_stored_salted(tmp_path: Path) -> None:
    store = ScramCredentialStore(tmp_path)
    bootstrap_scram_users(store, "SCRAM-SHA-512=[name=admin,password=admin-secret]")
    text = (tmp_path / FILE_NAME).read_text()
    assert "admin-secret" not in text and '"admin"' in text
    assert ScramCredentialStore(tmp_path).users() == {"admin": {"SCRAM-SHA-512": 4096}}
    # a stored credential wins over the bootstrap one
    stored = store.get("SCRAM-SHA-512", "admin")
    bootstrap_scram_users(store, "SCRAM-SHA-512=[name=admin,password=other]")
    assert store.get("SCRAM-SHA-512", "admin") == stored


def test_plain_handshake_and_failure(tmp_path: Path) -> None:
    security = ListenerSecurity.build(
        "L",
        "SASL_PLAINTEXT",
        {"sasl.enabled.mechanisms": "PLAIN", "plain.sasl.jaas.config": JAAS},
        tmp_path,
    )
    session = SaslSession(security)
    assert session.handshake("SCRAM-SHA-256", 1)["error_code"] == 33
    assert session.handshake("PLAIN", 1) == {"error_code": 0, "mechanisms": ["PLAIN"]}
    assert session.authenticate(b"\x00admin\x00admin-secret") == b""
    assert session.authenticated and session.principal == "User:admin"
