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


def test_pkcs12_and_jks_stores_over_a_real_tls_connection(ca: TestCA, tmp_path: Path) -> None:
    """The https listener with a PKCS12 key store and a JKS trust store (keytool's), a
    forwarding worker presenting a JKS key store: the mutual TLS handshake completes."""
    import asyncio

    from harness.tls_certs import jks_keystore, pkcs12_keystore, truststore

    server_p12 = pkcs12_keystore(
        ca.issue("localhost", server=True), ca, tmp_path / "server.p12", "server-secret"
    )
    worker_p12 = pkcs12_keystore(ca.issue("worker-2"), ca, tmp_path / "w.p12", "w-secret")
    worker_jks = jks_keystore(worker_p12, "w-secret", tmp_path / "w.jks", "jks-secret")
    trust_jks = truststore(ca, tmp_path / "trust.jks", "trust-secret", "JKS")
    server = RestTlsSettings(
        {
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": str(server_p12),
            "listeners.https.ssl.keystore.password": "server-secret",
            "listeners.https.ssl.truststore.type": "JKS",
            "listeners.https.ssl.truststore.location": str(trust_jks),
            "listeners.https.ssl.truststore.password": "trust-secret",
            "listeners.https.ssl.client.auth": "required",
        }
    ).server_context()
    client = RestTlsSettings(
        {
            "ssl.keystore.type": "JKS",
            "ssl.keystore.location": str(worker_jks),
            "ssl.keystore.password": "jks-secret",
            "ssl.truststore.type": "JKS",
            "ssl.truststore.location": str(trust_jks),
            "ssl.truststore.password": "trust-secret",
        }
    ).client_context()
    seen: list[object] = []

    async def run() -> None:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("peercert")["subject"])
            writer.write(b"ok")
            await writer.drain()
            writer.close()

        listener = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=server)
        port = listener.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client, server_hostname="localhost"
        )
        assert await reader.read() == b"ok"
        writer.close()
        listener.close()

    asyncio.run(run())
    assert (("commonName", "worker-2"),) in seen[0]  # type: ignore[operator]
    with pytest.raises(RestTlsError, match=r"wrong listeners\.https\.ssl\.truststore\.password"):
        RestTlsSettings(
            {
                "ssl.keystore.location": str(server_p12),
                "ssl.keystore.password": "server-secret",
                "listeners.https.ssl.truststore.location": str(trust_jks),
                "listeners.https.ssl.truststore.password": "wrong-one",
            }
        ).server_context()
