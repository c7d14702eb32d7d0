"""Worker-level security keys reach every client of the worker; prefixed keys win."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.runtime.settings import RuntimeSettings
from connect_worker.worker_config import WorkerConfig
from connectors.api import ConfigError
from harness.tls_certs import TestCA, pkcs12_keystore
from log_engine.client import ConsumerConfig, ProducerConfig


def test_worker_security_keys_reach_producer_consumer_and_admin(tmp_path: Path) -> None:
    ca_pem = str(TestCA(tmp_path).cert)  # the stores are opened at start: a real file
    config = WorkerConfig.from_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            'required username="connect" password="connect-secret";',
            "ssl.truststore.location": ca_pem,
            "consumer.sasl.mechanism": "SCRAM-SHA-256",
            "producer.linger.ms": "5",
        }
    )
    settings = RuntimeSettings.from_worker_config(config, bootstrap="kafka:9093")
    for props in (settings.producer_props, settings.consumer_props, settings.admin_props):
        assert props["security.protocol"] == "SASL_SSL"
        assert props["ssl.truststore.location"] == ca_pem
    assert settings.producer_props["sasl.mechanism"] == "SCRAM-SHA-512"
    assert settings.consumer_props["sasl.mechanism"] == "SCRAM-SHA-256"
    producer = ProducerConfig.from_mapping(
        {"bootstrap.servers": "kafka:9093", **settings.producer_props}
    )
    assert producer.ssl_ca_location == ca_pem  # the Java name, mapped
    assert producer.sasl_credentials() == ("connect", "connect-secret")
    assert "connect-secret" not in repr(producer)
    consumer = ConsumerConfig.from_mapping(
        {"bootstrap.servers": "kafka:9093", "group.id": "g", **settings.consumer_props}
    )
    assert consumer.sasl_mechanism == "SCRAM-SHA-256"


def test_a_bad_client_store_stops_the_worker_naming_key_and_file(tmp_path: Path) -> None:
    ca = TestCA(tmp_path)
    p12 = pkcs12_keystore(ca.issue("connect"), ca, tmp_path / "connect.p12", "store-secret")
    base = {
        "security.protocol": "SSL",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(p12),
        "ssl.keystore.password": "store-secret",
    }
    assert WorkerConfig.from_properties(base)  # the right password: the worker starts
    with pytest.raises(ConfigError, match=r"producer clients: cannot open the PKCS12") as caught:
        WorkerConfig.from_properties({**base, "producer.ssl.keystore.password": "bad-secret"})
    assert str(p12) in str(caught.value) and "secret" not in str(caught.value)
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.type=JKS but .* is a PEM file"):
        WorkerConfig.from_properties(
            {**base, "ssl.keystore.location": str(ca.cert), "ssl.keystore.type": "JKS"}
        )
