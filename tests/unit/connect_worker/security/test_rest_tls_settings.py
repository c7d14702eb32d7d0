"""The REST listeners' TLS keys: Connect's listeners.https. prefix, the worker's ssl.* keys
under it, and which listener a distributed worker advertises."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from connect_worker.herder.distributed_config import DistributedConfig
from connect_worker.security.rest_tls import RestTlsError, RestTlsSettings
from connect_worker.worker_config import WorkerConfig
from connectors.api import ConfigError
from harness.tls_certs import TestCA


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


def test_the_prefixed_key_wins_over_the_workers_ssl_key(ca: TestCA) -> None:
    server = ca.issue("localhost", server=True)
    settings = RestTlsSettings(
        {
            "ssl.keystore.location": "/nowhere.pem",  # the Kafka clients' one
            "listeners.https.ssl.keystore.location": str(server.pem),
        }
    )
    assert settings.server_context().verify_mode == ssl.CERT_NONE
    # the bare keys alone serve too, as in Connect
    assert RestTlsSettings({"ssl.keystore.location": str(server.pem)}).server_context()


def test_pem_text_and_client_auth(ca: TestCA) -> None:
    server = ca.issue("localhost", server=True)
    context = RestTlsSettings(
        {
            "ssl.keystore.certificate.chain": server.cert.read_text(),
            "ssl.keystore.key": server.key.read_text(),
            "listeners.https.ssl.truststore.location": str(ca.cert),
            "listeners.https.ssl.client.auth": "required",
        }
    ).server_context()
    assert context.verify_mode == ssl.CERT_REQUIRED


def test_bad_settings_name_their_key_and_never_a_secret(ca: TestCA, tmp_path: Path) -> None:
    with pytest.raises(RestTlsError, match=r"needs listeners\.https\.ssl\.keystore\.location"):
        RestTlsSettings({}).server_context()
    server = ca.issue("localhost", server=True)
    with pytest.raises(RestTlsError, match=r"listeners\.https\.ssl\.keystore\.type=BKS"):
        RestTlsSettings(
            {
                "listeners.https.ssl.keystore.type": "BKS",
                "listeners.https.ssl.keystore.location": str(server.pem),
            }
        ).server_context()
    with pytest.raises(RestTlsError, match=r"needs ssl\.truststore"):
        RestTlsSettings(
            {"ssl.keystore.location": str(server.pem), "ssl.client.auth": "required"}
        ).server_context()
    with pytest.raises(RestTlsError, match="one of none, requested, required"):
        RestTlsSettings(
            {"ssl.keystore.location": str(server.pem), "ssl.client.auth": "maybe"}
        ).server_context()
    garbage = "-----BEGIN PRIVATE KEY-----\nnot-a-key-SECRET\n-----END PRIVATE KEY-----"
    with pytest.raises(RestTlsError, match=r"cannot read ssl\.keystore\.key") as e:
        RestTlsSettings(
            {"ssl.keystore.certificate.chain": server.cert.read_text(), "ssl.keystore.key": garbage}
        ).server_context()
    assert "SECRET" not in str(e.value)


def test_listeners_may_be_http_and_https() -> None:
    config = WorkerConfig.from_properties(
        {"listeners": "https://0.0.0.0:8443,http://127.0.0.1:8083"}
    )
    assert config.rest_listeners == [("https", "0.0.0.0", 8443), ("http", "127.0.0.1", 8083)]
    with pytest.raises(ConfigError, match=r"rest\.extension\.classes"):
        WorkerConfig.from_properties({"rest.extension.classes": "com.example.Other"})


def test_rest_advertised_listener_picks_the_scheme() -> None:
    base = {
        "bootstrap.servers": "b:9092",
        "group.id": "g",
        "listeners": "http://127.0.0.1:8083,https://10.0.0.5:8443",
    }
    assert DistributedConfig.from_properties(base).advertised_url == "http://127.0.0.1:8083/"
    https = DistributedConfig.from_properties({**base, "rest.advertised.listener": "https"})
    assert https.advertised_url == "https://10.0.0.5:8443/"
    assert https.worker_id == "10.0.0.5:8443"
    with pytest.raises(ConfigError, match=r"rest\.advertised\.listener"):
        DistributedConfig.from_properties(
            {**base, "listeners": "http://127.0.0.1:8083", "rest.advertised.listener": "https"}
        )


def test_the_rest_listeners_client_auth_is_not_a_kafka_client_key() -> None:
    config = WorkerConfig.from_properties(
        {"ssl.client.auth": "required", "ssl.truststore.location": "/ca.pem"}
    )
    assert config.client_security_props() == {"ssl.truststore.location": "/ca.pem"}
