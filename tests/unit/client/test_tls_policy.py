"""Kafka's ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites read into a context."""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import pytest

from harness.tls_certs import TestCA
from log_engine.broker.security.inter_broker import client_settings
from log_engine.client import ClientConfig
from log_engine.client import tls_policy as policy_module
from log_engine.client.security import ssl_context
from log_engine.client.tls_policy import TlsPolicy, TlsPolicyError, iana_to_openssl
from log_engine.client.tls_stores import StoreKeys


def _policy(prefix: str = "", **keys: str) -> TlsPolicy:
    settings = {prefix + k.replace("_", "."): v for k, v in keys.items()}

    def get(key: str) -> str | None:
        return settings.get(prefix + key)

    return TlsPolicy.from_keys(StoreKeys(get, lambda key: prefix + key))


def _context(policy: TlsPolicy) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    policy.apply(context)
    return context


@pytest.mark.parametrize(
    ("iana", "openssl"),
    [
        ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"),
        ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"),
        ("TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256"),
        ("TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"),
        ("TLS_NO_SUCH_SUITE", None),
    ],
)
def test_iana_names_map_through_openssls_table(iana: str, openssl: str | None) -> None:
    assert iana_to_openssl(iana) == openssl


def test_defaults_are_kafkas() -> None:
    context = _context(_policy())
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert context.maximum_version == ssl.TLSVersion.TLSv1_3


@pytest.mark.parametrize(
    ("value", "low", "high"),
    [
        ("TLSv1.3", ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
        ("TLSv1.2", ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
        (" TLSv1.3 , tlsv1.2 ", ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3),
    ],
)
def test_enabled_protocols_span_the_list(
    value: str, low: ssl.TLSVersion, high: ssl.TLSVersion
) -> None:
    context = _context(_policy(ssl_enabled_protocols=value))
    assert (context.minimum_version, context.maximum_version) == (low, high)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"ssl_enabled_protocols": "TLSv1.2,TLSv1.1"}, "ssl.enabled.protocols: TLSv1.1 is"),
        ({"ssl_enabled_protocols": "SSLv3"}, "ssl.enabled.protocols: SSLv3 is disabled"),
        ({"ssl_enabled_protocols": "TLS1.3"}, "unknown protocol 'TLS1.3'"),
        ({"ssl_enabled_protocols": ","}, "names no protocol"),
        ({"ssl_protocol": "TLSv1.1"}, "ssl.protocol=TLSv1.1: disabled"),
        ({"ssl_protocol": "DTLS"}, "ssl.protocol=DTLS: one of TLSv1.3, TLSv1.2, TLS"),
        ({"ssl_cipher_suites": "TLS_NO_SUCH_SUITE"}, "unknown cipher suite 'TLS_NO_SUCH_SUITE'"),
        ({"ssl_cipher_suites": "NOT-A-CIPHER"}, "cipher suite 'NOT-A-CIPHER' is unknown"),
        ({"ssl_cipher_suites": "TLS_AES_256_GCM_SHA384"}, "names only TLS 1.3 suites"),
        (
            {"ssl_cipher_suites": "AES128-SHA", "ssl_enabled_protocols": "TLSv1.3"},
            "names only TLS 1.2 suites but only TLSv1.3 is enabled",
        ),
    ],
)
def test_bad_values_name_the_prefixed_key(keys: dict[str, str], message: str) -> None:
    with pytest.raises(TlsPolicyError, match=r"listener\.name\.ssl\.") as caught:
        _policy("listener.name.ssl.", **keys)
    assert message in str(caught.value)


def test_iana_and_openssl_names_restrict_the_tls12_suites() -> None:
    suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, ECDHE-RSA-AES256-GCM-SHA384"
    context = _context(_policy(ssl_cipher_suites=suites, ssl_enabled_protocols="TLSv1.2"))
    tls12 = {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert tls12 == {"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384"}


def test_tls13_suites_are_accepted_and_said_to_stay_the_defaults(
    caplog: pytest.LogCaptureFixture,
) -> None:
    policy_module._tls13_logged = False
    with caplog.at_level(logging.INFO, logger=policy_module.__name__):
        only13 = {"ssl_cipher_suites": "TLS_AES_256_GCM_SHA384", "ssl_enabled_protocols": "TLSv1.3"}
        _context(_policy(**only13))
        mixed = _policy(ssl_cipher_suites="TLS_AES_128_GCM_SHA256,ECDHE-ECDSA-AES128-GCM-SHA256")
        _context(mixed)
    lines = [r for r in caplog.records if "cannot narrow" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO
    assert mixed.ciphers == ("ECDHE-ECDSA-AES128-GCM-SHA256",)


def test_the_client_config_accepts_and_checks_the_keys() -> None:
    base = {"bootstrap.servers": "127.0.0.1:9"}
    config = ClientConfig.from_mapping(
        {**base, "ssl.enabled.protocols": "TLSv1.3", "ssl.protocol": "TLSv1.3"}
    )
    assert config.ssl_enabled_protocols == "TLSv1.3"
    with pytest.raises(TlsPolicyError, match=r"ssl\.cipher\.suites: unknown cipher suite"):
        ClientConfig.from_mapping({**base, "ssl.cipher.suites": "TLS_NOPE"})


def test_the_broker_connects_to_other_nodes_with_the_listeners_keys() -> None:
    settings = {
        "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
        "listener.name.internal.ssl.enabled.protocols": "TLSv1.3",
        "ssl.protocol": "TLSv1.3",
        "listener.name.internal.ssl.cipher.suites": "TLS_AES_256_GCM_SHA384",
    }
    out = client_settings("INTERNAL", "SSL", settings)
    assert out["ssl.enabled.protocols"] == "TLSv1.3"
    assert out["ssl.protocol"] == "TLSv1.3"
    assert out["ssl.cipher.suites"] == "TLS_AES_256_GCM_SHA384"


def test_a_clients_connections_share_one_tls_context(tmp_path: Path) -> None:
    ca = TestCA(tmp_path / "ca")
    settings = {
        "bootstrap.servers": "localhost:9093",
        "security.protocol": "SSL",
        "ssl.truststore.location": str(ca.cert),
    }
    config = ClientConfig.from_mapping(settings)
    first = ssl_context(config)
    assert first is not None and ssl_context(config) is first
    other = ClientConfig.from_mapping({**settings, "ssl.endpoint.identification.algorithm": ""})
    assert ssl_context(other) is not first
