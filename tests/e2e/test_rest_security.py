"""The REST API over HTTPS behind basic authentication, with real processes (issue 19).

A ``sluice standalone`` worker serves ``https://`` (and ``http://`` beside it)
with Kafka Connect's BasicAuthSecurityRestExtension: no credentials and wrong
ones are 401, a known user 200; curl with ``--cacert`` and the ``sluice
connectors`` CLI with credentials work. Two ``sluice distributed`` workers
over HTTPS with basic auth forward a write from the follower to the leader,
with the user's credentials, and the follower's pipeline file (no user: the
worker signs its own request).
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.broker_process import BrokerProcess, free_port
from harness.distributed_process import DistributedProcess, config_of
from harness.standalone_process import StandaloneProcess, file_source, wait_for_rest
from harness.tls_certs import Issued, TestCA

USER, PASSWORD = "alice", "alice-rest-secret"
JAAS_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"


class Secured:
    """A CA, the workers' certificate and the JAAS + users files."""

    def __init__(self, root: Path) -> None:
        self.ca = TestCA(root / "ca")
        self.server: Issued = self.ca.issue("localhost", server=True)
        users = root / "rest-users.properties"
        users.write_text(f"{USER}: {PASSWORD}\nbob: bob-secret\n")
        self.jaas = root / "connect_jaas.conf"
        self.jaas.write_text(f'KafkaConnect {{\n  {JAAS_MODULE} required\n  file="{users}";\n}};\n')

    def trust(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca.cert))

    def worker_settings(self) -> dict[str, str]:
        return {
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.keystore.location": str(self.server.pem),
            "listeners.https.ssl.truststore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(self.ca.cert),
            "rest.extension.classes": EXTENSION,
            "rest.basic.auth.jaas.config": str(self.jaas),
        }


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Secured:
    return Secured(tmp_path_factory.mktemp("secured"))


@pytest.fixture(scope="module")
def standalone(
    secured: Secured, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StandaloneProcess]:
    http_port = free_port()
    root = tmp_path_factory.mktemp("standalone")
    process = StandaloneProcess(
        root, scheme="https", cacert=secured.ca.cert, auth=(USER, PASSWORD),
        **secured.worker_settings(),
    )  # fmt: skip
    settings = process.worker_properties.read_text().replace(
        f"listeners=https://127.0.0.1:{process.rest_port}",
        f"listeners=https://127.0.0.1:{process.rest_port},http://127.0.0.1:{http_port}",
    )
    process.worker_properties.write_text(settings)
    process.http_port = http_port  # type: ignore[attr-defined]
    process.start()
    yield process
    code = process.stop()
    process.close()
    assert code == 0, process.log_text()
    assert "graceful shutdown exceeded" not in process.log_text()  # idle HTTPS clients


def test_no_wrong_and_right_credentials(standalone: StandaloneProcess, secured: Secured) -> None:
    with httpx.Client(base_url=standalone.url, verify=secured.trust()) as anonymous:
        refused = anonymous.get("/connectors")
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"].startswith("Basic")
        assert anonymous.get("/connectors", auth=(USER, "wrong")).status_code == 401
        assert anonymous.get("/connectors", auth=("mallory", PASSWORD)).status_code == 401
        assert anonymous.get("/health").status_code == 401  # as in Connect: behind it too
        assert anonymous.get("/connectors", auth=(USER, PASSWORD)).status_code == 200
        assert anonymous.get("/connectors", auth=("bob", "bob-secret")).status_code == 200
    assert PASSWORD not in standalone.log_text()


def test_the_http_listener_beside_it_asks_for_credentials_too(
    standalone: StandaloneProcess,
) -> None:
    url = f"http://127.0.0.1:{standalone.http_port}"  # type: ignore[attr-defined]
    assert httpx.get(f"{url}/connectors").status_code == 401
    assert httpx.get(f"{url}/connectors", auth=(USER, PASSWORD)).status_code == 200


def test_tls_is_checked(standalone: StandaloneProcess, tmp_path: Path) -> None:
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{standalone.url}/connectors", auth=(USER, PASSWORD))  # system CAs only
    other = TestCA(tmp_path / "other", "Other CA")
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{standalone.url}/", verify=ssl.create_default_context(cafile=str(other.cert)))
    plain = f"http://127.0.0.1:{standalone.rest_port}/connectors"
    with pytest.raises(httpx.HTTPError):
        httpx.get(plain, auth=(USER, PASSWORD))


def _curl(*args: str) -> str:
    done = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", *args],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return done.stdout


def test_curl_with_cacert(standalone: StandaloneProcess, secured: Secured) -> None:
    url = f"{standalone.url}/connectors"
    assert _curl("--cacert", str(secured.ca.cert), url) == "401"
    assert _curl("--cacert", str(secured.ca.cert), "-u", f"{USER}:wrong", url) == "401"
    assert _curl("--cacert", str(secured.ca.cert), "-u", f"{USER}:{PASSWORD}", url) == "200"
    assert _curl("-u", f"{USER}:{PASSWORD}", url) == "000"  # unknown CA: no answer read


def _sluice(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", *args],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_cli_with_credentials(
    standalone: StandaloneProcess, secured: Secured, tmp_path: Path
) -> None:
    access = ["--url", standalone.url, "--cacert", str(secured.ca.cert)]
    refused = _sluice("connectors", "list", *access)
    assert refused.returncode == 1
    assert "401" in refused.stderr and "--user" in refused.stderr
    wrong = _sluice("connectors", "list", *access, "--user", USER, "--password", "nope")
    assert wrong.returncode == 1 and "401" in wrong.stderr
    no_password = _sluice("connectors", "list", *access, "--user", USER)
    assert no_password.returncode == 1 and "--password" in no_password.stderr

    source = tmp_path / "in.txt"
    source.write_text("x\n")
    pipeline = tmp_path / "cli-src.properties"
    pipeline.write_text(file_source("cli-src", source, "cli-lines"))
    created = _sluice(
        "connectors", "create", str(pipeline), *access, "--user", USER, "--password", PASSWORD
    )
    assert created.returncode == 0, created.stderr
    env = {"SLUICE_USER": USER, "SLUICE_PASSWORD": PASSWORD, "SLUICE_CACERT": str(secured.ca.cert)}
    listed = _sluice("connectors", "list", "--url", standalone.url, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "cli-src" in listed.stdout
    untrusted = _sluice("connectors", "list", "--url", standalone.url, "--user", USER,
                        "--password", PASSWORD)  # fmt: skip
    assert untrusted.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr


def test_the_console_works_for_a_logged_in_browser(
    standalone: StandaloneProcess, tmp_path: Path
) -> None:
    """Chromium: without a login the console is a 401; with the user's login (what the
    browser's Basic prompt sends) its pages and every API call they make work."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect, sync_playwright

    source = tmp_path / "in.txt"
    source.write_text("x\n")
    config = config_of(file_source("ui-src", source, "ui-lines"))
    assert standalone.http.put("/connectors/ui-src/config", json=config).status_code == 201
    executable = shutil.which("chromium")
    assert executable, "chromium is not installed: run `make system-deps`"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            stranger = browser.new_context(ignore_https_errors=True)
            # the browser is asked to log in (WWW-Authenticate); without a login it gives up
            with pytest.raises(PlaywrightError, match="ERR_INVALID_AUTH_CREDENTIALS"):
                stranger.new_page().goto(f"{standalone.url}/ui/")
            context = browser.new_context(
                ignore_https_errors=True,
                http_credentials={"username": USER, "password": PASSWORD},
            )
            statuses: list[int] = []
            page = context.new_page()
            page.on("response", lambda response: statuses.append(response.status))
            page.goto(f"{standalone.url}/ui/")
            row = page.locator('#connectors tr[data-connector="ui-src"] td.state .badge')
            expect(row).to_have_text("RUNNING", timeout=30_000)
            page.goto(f"{standalone.url}/ui/#/connectors/ui-src")
            expect(page.locator("#config")).to_contain_text("ui-lines", timeout=30_000)
            assert statuses and all(code < 400 or code == 401 for code in statuses), statuses
        finally:
            browser.close()


# -------------------------------------------------------------------- distributed


@pytest.fixture
def cluster(secured: Secured, tmp_path: Path) -> Iterator[list[DistributedProcess]]:
    broker = BrokerProcess(tmp_path / "broker").start()
    workers = [
        DistributedProcess(
            tmp_path / name,
            bootstrap=broker.bootstrap,
            group_id="secured",
            scheme="https",
            cacert=secured.ca.cert,
            auth=(USER, PASSWORD),
            **{**secured.worker_settings(), "rest.advertised.listener": "https"},
        )
        for name in ("a", "b")
    ]
    try:
        for worker in workers:
            worker.start()
        yield workers
    finally:
        for worker in workers:
            worker.close()
        broker.stop()
    for worker in workers:  # idle HTTPS keep-alive connections do not hold up a stop
        assert "graceful shutdown exceeded" not in worker.log_text(), worker.log_text()


def _leader_and_follower(
    workers: list[DistributedProcess],
) -> tuple[DistributedProcess, DistributedProcess]:
    for worker in workers:
        if "(leader)" in worker.log_text():
            return worker, next(w for w in workers if w is not worker)
    raise KeyError("no leader yet")


def test_distributed_workers_forward_over_https_with_credentials(
    cluster: list[DistributedProcess], secured: Secured, tmp_path: Path
) -> None:
    leader, follower = wait_for_rest(lambda: _leader_and_follower(cluster), "a leader")
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    config = config_of(file_source("https-src", source, "https-lines"))
    with httpx.Client(base_url=follower.url, verify=secured.trust()) as anonymous:
        assert anonymous.put("/connectors/https-src/config", json=config).status_code == 401
        wrong = anonymous.put("/connectors/https-src/config", json=config, auth=(USER, "x"))
        assert wrong.status_code == 401

    def put() -> bool:
        response = follower.http.put("/connectors/https-src/config", json=config)
        assert response.status_code in (201, 409), response.text
        return response.status_code == 201

    wait_for_rest(put, "the follower's write forwarded to the leader")
    for worker in cluster:
        worker.wait_running("https-src")
    assert "X-Sluice-Forwarded" not in leader.log_text()  # nothing logged the headers

    # the follower's watcher has no user: it signs its request to the leader itself
    follower.write_pipeline("file-src", file_source("file-src", source, "file-lines"))
    for worker in cluster:
        worker.wait_running("file-src")
    for worker in cluster:
        assert PASSWORD not in worker.log_text()
