"""The broker's own client keys for reaching another node's listener (Kafka's keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tls_certs import TestCA, pkcs12_keystore
from log_engine.broker.config import BrokerConfig, BrokerConfigError, security_protocol_id
from log_engine.broker.security.inter_broker import CONTROLLER_MECHANISM, client_settings
from log_engine.broker.security.listener_security import SecurityConfigError
from log_engine.client.config import ClientConfig

SCRAM = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="broker" password="broker-secret";'
)
PLAIN = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret";'
)


def test_plaintext_needs_nothing() -> None:
    assert client_settings("PLAINTEXT", "PLAINTEXT", {}) == {"security.protocol": "PLAINTEXT"}


def test_sasl_ssl_reads_the_listener_keys_first() -> None:
    settings = {
        "ssl.truststore.location": "/etc/ca.pem",
        "listener.name.internal.ssl.truststore.location": "/etc/internal-ca.pem",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.internal.plain.sasl.jaas.config": PLAIN,
        "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM,
    }
    out = client_settings("INTERNAL", "SASL_SSL", settings)
    assert out == {
        "security.protocol": "SASL_SSL",
        "ssl.endpoint.identification.algorithm": "https",
        "ssl.ca.location": "/etc/internal-ca.pem",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "broker",
        "sasl.password": "broker-secret",
    }
    # the client takes them (model_validate: from_mapping would open the made-up files)
    ClientConfig.model_validate({**out, "bootstrap.servers": "h:1"})


def test_pkcs12_stores_reach_the_brokers_own_client(tmp_path: Path) -> None:
    ca = TestCA(tmp_path)
    p12 = pkcs12_keystore(ca.issue("broker-1"), ca, tmp_path / "b.p12", "store-secret")
    settings = {
        "listener.name.internal.ssl.keystore.type": "PKCS12",
        "listener.name.internal.ssl.keystore.location": str(p12),
        "ssl.keystore.password": "store-secret",
        "ssl.truststore.location": str(ca.cert),
    }
    out = client_settings("INTERNAL", "SSL", settings)
    assert out["ssl.keystore.type"] == "PKCS12"
    assert out["ssl.keystore.location"] == str(p12)
    config = ClientConfig.from_mapping({**out, "bootstrap.servers": "h:1"})  # opens the store
    assert config.ssl_keystore_password is not None


def test_mechanism_defaults_to_the_first_enabled_one() -> None:
    settings = {
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN,
    }
    out = client_settings("SASL_PLAINTEXT", "SASL_PLAINTEXT", settings)
    assert (out["sasl.mechanism"], out["sasl.username"]) == ("PLAIN", "admin")


def test_missing_credentials_name_the_key() -> None:
    settings = {"sasl.mechanism.controller.protocol": "SCRAM-SHA-256"}
    with pytest.raises(SecurityConfigError, match=r"listener\.name\.controller\.scram-sha-256"):
        client_settings("CONTROLLER", "SASL_SSL", settings, CONTROLLER_MECHANISM)
    with pytest.raises(SecurityConfigError, match="GSSAPI"):
        client_settings(
            "CONTROLLER", "SASL_SSL", {"sasl.mechanism.controller.protocol": "GSSAPI"},
            CONTROLLER_MECHANISM,
        )  # fmt: skip


def _config(**extra: str) -> BrokerConfig:
    props = {
        "node.id": "1",
        "process.roles": "broker,controller",
        "controller.quorum.voters": "1@127.0.0.1:9093",
        "controller.listener.names": "CONTROLLER",
        "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9094,"
        "CONTROLLER://127.0.0.1:9093",
        "log.dirs": "/tmp/unused",
        **extra,
    }
    return BrokerConfig.from_properties(props)


def test_every_client_listener_is_bound_and_advertised_by_name() -> None:
    config = _config(**{"advertised.listeners": "SASL_SSL://kafka1.example.com:9094"})
    assert [listener.name for listener in config.broker_listeners] == ["PLAINTEXT", "SASL_SSL"]
    assert config.listener.name == "PLAINTEXT"  # the first: the inter-broker one
    plain, secure = config.broker_listeners
    assert str(config.advertised_for(plain)) == "PLAINTEXT://127.0.0.1:9092"
    assert str(config.advertised_for(secure)) == "SASL_SSL://kafka1.example.com:9094"


def test_security_inter_broker_protocol_names_the_listener() -> None:
    assert _config(**{"security.inter.broker.protocol": "SASL_SSL"}).listener.name == "SASL_SSL"
    with pytest.raises(BrokerConfigError, match="not both"):
        _config(
            **{
                "security.inter.broker.protocol": "SASL_SSL",
                "inter.broker.listener.name": "PLAINTEXT",
            }
        )


def test_a_secured_controller_listener_gives_the_cluster_its_client_keys() -> None:
    config = _config(
        **{
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,"
            "CONTROLLER:SASL_PLAINTEXT",
            "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
            "listener.name.controller.scram-sha-512.sasl.jaas.config": SCRAM,
        }
    )
    assert config.cluster is not None
    assert config.cluster.controller_client["sasl.username"] == "broker"
    with pytest.raises(BrokerConfigError, match="controller listener CONTROLLER"):
        _config(**{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,"
                   "CONTROLLER:SASL_SSL", "sasl.mechanism.controller.protocol": "PLAIN"})


def test_each_listener_registers_with_its_security_protocol_id() -> None:
    config = _config(
        **{
            "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9094,"
            "INTERNAL://127.0.0.1:9095,EXTERNAL://0.0.0.0:9096,CONTROLLER://127.0.0.1:9093",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,"
            "INTERNAL:SSL,EXTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            "advertised.listeners": "SASL_SSL://kafka1.example.com:9094",
        }
    )
    advertised = [config.advertised_for(bound) for bound in config.broker_listeners]
    assert [(a.name, security_protocol_id(a.protocol)) for a in advertised] == [
        ("PLAINTEXT", 0), ("SASL_SSL", 3), ("INTERNAL", 1), ("EXTERNAL", 2),
    ]  # fmt: skip
