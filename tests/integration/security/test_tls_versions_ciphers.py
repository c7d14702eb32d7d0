"""``ssl.enabled.protocols``, ``ssl.protocol`` and ``ssl.cipher.suites`` on a real broker.

One broker, two SSL listeners: ``SSL`` takes the bare ``ssl.enabled.protocols=TLSv1.3``,
``TLS12`` its own ``listener.name.tls12.`` keys (TLS 1.2 and one suite, named as
Java names it). Python's ``ssl`` clients show what each listener negotiates and
refuses; Sluice's own client with the same keys is refused or served the same way.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess, free_port
from harness.secured_broker import negotiated
from harness.tls_certs import TestCA
from log_engine.client import SyncAdmin, SyncProducer
from log_engine.client.security import SslAuthenticationError

SUITE_IANA = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
SUITE_OPENSSL = "ECDHE-ECDSA-AES128-GCM-SHA256"
OTHER_SUITE_IANA = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
OTHER_SUITE_OPENSSL = "ECDHE-ECDSA-AES256-GCM-SHA384"
KCAT = shutil.which("kcat") or "kcat"


class Pki:
    def __init__(self, root: Path) -> None:
        self.ca = TestCA(root)
        self.broker = self.ca.issue("localhost", server=True)  # an ECDSA key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


def _settings(pki: Pki, tls12_port: int, port: int) -> dict[str, str]:
    return {
        "listeners": f"SSL://127.0.0.1:{port},TLS12://127.0.0.1:{tls12_port}",
        "listener.security.protocol.map": "SSL:SSL,TLS12:SSL",
        "ssl.keystore.location": str(pki.broker.pem),
        "ssl.enabled.protocols": "TLSv1.3",
        "ssl.protocol": "TLSv1.3",
        "listener.name.tls12.ssl.enabled.protocols": "TLSv1.2",
        "listener.name.tls12.ssl.protocol": "TLSv1.2",
        "listener.name.tls12.ssl.cipher.suites": SUITE_IANA,
    }


@pytest.fixture(scope="module")
def broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    port, tls12_port = free_port(), free_port()
    process = BrokerProcess(
        tmp_path_factory.mktemp("broker") / "data", port=port, **_settings(pki, tls12_port, port)
    ).start()
    process.tls12_port = tls12_port  # type: ignore[attr-defined]
    yield process
    assert process.stop() == 0, process.log_text()


def _client(pki: Pki, **limits: ssl.TLSVersion) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca.cert))
    for name, value in limits.items():
        setattr(context, name, value)
    return context


def _ours(broker_port: int, pki: Pki, **settings: str) -> dict[str, str]:
    return {
        "bootstrap.servers": f"127.0.0.1:{broker_port}",
        "security.protocol": "SSL",
        "ssl.truststore.location": str(pki.ca.cert),
        "default.api.timeout.ms": "3000",
        "request.timeout.ms": "2000",
        "socket.connection.setup.timeout.ms": "2000",
        **settings,
    }


def test_a_tls13_only_listener_refuses_a_tls12_client(broker: BrokerProcess, pki: Pki) -> None:
    with pytest.raises(ssl.SSLError):
        negotiated(broker.port, _client(pki, maximum_version=ssl.TLSVersion.TLSv1_2))
    version, _ = negotiated(broker.port, _client(pki))
    assert version == "TLSv1.3"


def test_a_listener_with_one_suite_negotiates_it(broker: BrokerProcess, pki: Pki) -> None:
    port = broker.tls12_port  # type: ignore[attr-defined]
    assert negotiated(port, _client(pki)) == ("TLSv1.2", SUITE_OPENSSL)
    other = _client(pki)
    other.set_ciphers(OTHER_SUITE_OPENSSL)
    with pytest.raises(ssl.SSLError):
        negotiated(port, other)
    with pytest.raises(ssl.SSLError):  # TLS 1.3 is off on this listener
        negotiated(port, _client(pki, minimum_version=ssl.TLSVersion.TLSv1_3))


def test_our_client_applies_the_same_keys(broker: BrokerProcess, pki: Pki) -> None:
    tls12 = _ours(broker.port, pki, **{"ssl.enabled.protocols": "TLSv1.2"})
    with SyncAdmin(tls12) as admin, pytest.raises(SslAuthenticationError, match="PROTOCOL_VERSION"):
        admin.list_topics()
    with SyncAdmin(_ours(broker.port, pki, **{"ssl.protocol": "TLSv1.3"})) as admin:
        admin.list_topics()

    port = broker.tls12_port  # type: ignore[attr-defined]
    other = _ours(port, pki, **{"ssl.cipher.suites": OTHER_SUITE_IANA})
    with SyncAdmin(other) as admin, pytest.raises(SslAuthenticationError, match="HANDSHAKE"):
        admin.list_topics()
    topic = f"suites-{uuid.uuid4().hex[:6]}"
    for suites in (SUITE_IANA, SUITE_OPENSSL):
        same = _ours(port, pki, **{"ssl.cipher.suites": suites, "ssl.enabled.protocols": "TLSv1.2"})
        same.pop("default.api.timeout.ms")
        with SyncProducer(same) as producer:
            producer.send(topic, suites.encode()).result(timeout=30)


def test_kcat_with_librdkafkas_suite_names(broker: BrokerProcess, pki: Pki) -> None:
    port = broker.tls12_port  # type: ignore[attr-defined]
    common = [KCAT, "-b", f"127.0.0.1:{port}", "-X", "security.protocol=SSL",
              "-X", f"ssl.ca.location={pki.ca.cert}", "-m", "5", "-L"]  # fmt: skip
    served = subprocess.run(
        [*common, "-X", f"ssl.cipher.suites={SUITE_OPENSSL}"], capture_output=True, timeout=60
    )
    assert served.returncode == 0 and b"1 brokers" in served.stdout, served.stderr
    refused = subprocess.run(
        [*common, "-X", f"ssl.cipher.suites={OTHER_SUITE_OPENSSL}"], capture_output=True, timeout=60
    )
    assert refused.returncode != 0, refused.stdout


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"ssl.enabled.protocols": "TLSv1.1,TLSv1.2"},
            "ssl.enabled.protocols: TLSv1.1 is disabled",
        ),
        ({"ssl.enabled.protocols": "TLSv1.4"}, "ssl.enabled.protocols: unknown protocol 'TLSv1.4'"),
        ({"ssl.protocol": "SSLv3"}, "ssl.protocol=SSLv3: disabled"),
        (
            {"listener.name.tls12.ssl.cipher.suites": "TLS_ECDHE_WITH_NOTHING"},
            "listener.name.tls12.ssl.cipher.suites: unknown cipher suite 'TLS_ECDHE_WITH_NOTHING'",
        ),
        (
            {"listener.name.tls12.ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"},
            "listener.name.tls12.ssl.cipher.suites names only TLS 1.3 suites but TLSv1.2 "
            "is enabled",
        ),
    ],
)
def test_bad_values_stop_the_broker(
    pki: Pki, tmp_path: Path, settings: dict[str, str], expected: str
) -> None:
    port, tls12_port = free_port(), free_port()
    broker = BrokerProcess(
        tmp_path / "data", port=port, **{**_settings(pki, tls12_port, port), **settings}
    )
    try:
        with pytest.raises(RuntimeError, match="exited early"):
            broker.start()
    finally:
        broker.stop()  # also a broker that wrongly started
    assert expected in broker.log_text()
