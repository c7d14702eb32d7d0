"""The REST API's https listener honours ``listeners.https.ssl.enabled.protocols``,
``ssl.protocol`` and ``ssl.cipher.suites`` (issue 19); a bad value stops the worker.

A real ``sluice standalone`` serves https with TLS 1.2 and one suite named as
Java names it; Python's ``ssl`` clients show what the listener negotiates and
what it refuses.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.secured_broker import negotiated
from harness.standalone_process import StandaloneProcess
from harness.tls_certs import Issued, TestCA

SUITE_IANA = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
SUITE_OPENSSL = "ECDHE-ECDSA-AES128-GCM-SHA256"


class Pki:
    def __init__(self, root: Path) -> None:
        self.ca = TestCA(root)
        self.server: Issued = self.ca.issue("localhost", server=True)  # an ECDSA key

    def worker_settings(self, **extra: str) -> dict[str, str]:
        return {
            "listeners.https.ssl.keystore.location": str(self.server.pem),
            "listeners.https.ssl.enabled.protocols": "TLSv1.2",
            "listeners.https.ssl.protocol": "TLSv1.2",
            "listeners.https.ssl.cipher.suites": SUITE_IANA,
            **extra,
        }


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def worker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    process = StandaloneProcess(
        tmp_path_factory.mktemp("worker"),
        scheme="https",
        cacert=pki.ca.cert,
        **pki.worker_settings(),
    ).start()
    yield process
    code = process.stop()
    process.close()
    assert code == 0, process.log_text()


def test_the_https_listener_negotiates_only_the_suite_and_version_set(
    worker: StandaloneProcess, pki: Pki
) -> None:
    assert worker.http.get("/connectors").status_code == 200
    trust = ssl.create_default_context(cafile=str(pki.ca.cert))
    assert negotiated(worker.rest_port, trust) == ("TLSv1.2", SUITE_OPENSSL)
    tls13 = ssl.create_default_context(cafile=str(pki.ca.cert))
    tls13.minimum_version = ssl.TLSVersion.TLSv1_3
    with pytest.raises(ssl.SSLError):
        negotiated(worker.rest_port, tls13)
    other = ssl.create_default_context(cafile=str(pki.ca.cert))
    other.set_ciphers("ECDHE-ECDSA-AES256-GCM-SHA384")
    with pytest.raises(ssl.SSLError):
        negotiated(worker.rest_port, other)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"listeners.https.ssl.cipher.suites": "TLS_NO_SUCH_SUITE"},
            "listeners.https.ssl.cipher.suites: unknown cipher suite 'TLS_NO_SUCH_SUITE'",
        ),
        (
            {"listeners.https.ssl.enabled.protocols": "TLSv1"},
            "listeners.https.ssl.enabled.protocols: TLSv1 is disabled",
        ),
    ],
)
def test_a_bad_value_stops_the_worker(
    pki: Pki, tmp_path: Path, settings: dict[str, str], expected: str
) -> None:
    worker = StandaloneProcess(
        tmp_path / "worker", scheme="https", cacert=pki.ca.cert, **pki.worker_settings(**settings)
    ).launch()
    try:
        assert worker.wait_exit() not in (None, 0), worker.log_text()
    finally:
        worker.stop()
        worker.close()
    assert expected in worker.log_text()
