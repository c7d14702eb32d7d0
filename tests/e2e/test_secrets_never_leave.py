"""Secrets never leave the worker: every path a config or an error goes out by (issue 19).

Connectors are created with known secret strings in every kind of secret key
(``connection.password``, a password inside ``connection.url``, a client
override's ``sasl.jaas.config``, ``ssl.key.password`` and ``ssl.keystore.key``,
``aws.secret.access.key``); one of them fails to connect, so its trace is
shown. Then every way out is read: the REST answers (configs, infos, statuses,
task configs, validation, the 400 of a bad config), the console's endpoints,
``sluice connectors status``, ``sluice validate``, ``sluice test`` and the
worker's log at DEBUG. None may hold a secret string.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.broker_process import free_port
from harness.standalone_process import StandaloneProcess, wait_for_rest

URL_PASSWORD = "urlpw-Xk9-never-shown"
PASSWORD = "pw-Zq7-never-shown"
JAAS_PASSWORD = "jaas-Wm3-never-shown"
KEY_PASSWORD = "keypw-Hn2-never-shown"
PEM_KEY_BODY = "pemkey-Jd8-never-shown"
AWS_SECRET = "aws-Rt5-never-shown"
TOKEN = "token-Vb4-never-shown"
SECRETS = (URL_PASSWORD, PASSWORD, JAAS_PASSWORD, KEY_PASSWORD, PEM_KEY_BODY, AWS_SECRET, TOKEN)

#: A third-party plugin (on plugin.path) careless with its secrets: it logs its
#: token at DEBUG and fails with the token and a URL holding a password in the message.
LEAKY_PLUGIN = """
import logging
from collections.abc import Mapping

from pydantic import Field, SecretStr

from connectors.api import ConnectError, PluginConfig, SourceConnector, SourceTask, hookimpl

log = logging.getLogger("leaky")


class LeakyConfig(PluginConfig):
    endpoint: str = Field(alias="endpoint", description="Where to log in.")
    token: SecretStr = Field(alias="auth.bearer", description="The login (declared secret).")


class LeakySource(SourceConnector):
    config_model = LeakyConfig
    aliases = ("LeakySource",)

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)
        log.debug("starting with %s", dict(props))

    @classmethod
    def task_class(cls) -> type:
        return LeakyTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]


class LeakyTask(SourceTask):
    def start(self, props: Mapping[str, str]) -> None:
        log.debug("logging in to %s with token %s", props["endpoint"], props["auth.bearer"])
        raise ConnectError(
            f"login to {props['endpoint']} refused for token {props['auth.bearer']}"
        )

    def poll(self):
        return []

    def stop(self) -> None:
        pass


@hookimpl
def sluice_connectors() -> list[type]:
    return [LeakySource]
"""

CLOSED_PORT = free_port()  # nothing listens there: the database connection fails


def jdbc_source(name: str, **extra: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "JdbcSourceConnector",
        "connection.url": f"postgresql://sluice:{URL_PASSWORD}@127.0.0.1:{CLOSED_PORT}/db",
        "connection.password": PASSWORD,
        "mode": "bulk",
        "table.whitelist": "orders",
        "topic.prefix": "secret-",
        "producer.override.sasl.jaas.config": (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="svc" password="{JAAS_PASSWORD}";'
        ),
        "producer.override.ssl.key.password": KEY_PASSWORD,
        "producer.override.ssl.keystore.key": (
            f"-----BEGIN PRIVATE KEY-----\n{PEM_KEY_BODY}\n-----END PRIVATE KEY-----"
        ),
        **extra,
    }


def s3_sink(name: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "S3SinkConnector",
        "topics": "secret-orders",
        "s3.bucket.name": "bucket",
        "store.url": f"http://127.0.0.1:{CLOSED_PORT}",
        "aws.access.key.id": "AKIDEXAMPLE",
        "aws.secret.access.key": AWS_SECRET,
        "flush.size": "1",
    }


def assert_no_secret(where: str, text: str | bytes | Any) -> None:
    if not isinstance(text, str | bytes):
        text = json.dumps(text)
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, f"{where} shows {leaked}:\n{text[:3000]}"


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    root = tmp_path_factory.mktemp("secrets")
    plugins = root / "plugins"
    plugins.mkdir()
    (plugins / "leaky_source.py").write_text(LEAKY_PLUGIN)
    process = StandaloneProcess(
        root, log_level="debug",
        **{"task.restart.backoff.initial.ms": "500", "plugin.path": str(plugins)},
    ).start()  # fmt: skip
    yield process
    process.stop()
    process.close()


def _failed(worker: StandaloneProcess, name: str) -> dict[str, Any]:
    status = worker.status(name)
    if status is None:
        raise KeyError(f"no {name} yet")
    states = [status["connector"]["state"], *(t["state"] for t in status["tasks"])]
    if "FAILED" not in states:
        raise KeyError("not failed yet")
    return status


def test_no_rest_answer_shows_a_secret(worker: StandaloneProcess) -> None:
    http = worker.http
    created = http.post("/connectors", json={"name": "db", "config": jdbc_source("db")})
    assert created.status_code == 201, created.text
    assert_no_secret("POST /connectors", created.text)
    status = wait_for_rest(lambda: _failed(worker, "db"), "the source FAILED (no database)")
    trace = status["connector"].get("trace") or "".join(
        t.get("trace") or "" for t in status["tasks"]
    )
    assert "127.0.0.1" in trace  # the trace says where it failed...
    assert_no_secret("GET /connectors/db/status", status)  # ...but not with what

    updated = http.put("/connectors/db/config", json=jdbc_source("db", **{"batch.max.rows": "7"}))
    assert updated.status_code == 200, updated.text
    assert_no_secret("PUT /connectors/db/config", updated.text)
    patched = http.patch("/connectors/db/config", json={"connection.password": PASSWORD + "2"})
    assert_no_secret("PATCH /connectors/db/config", patched.text)
    sink = http.post("/connectors", json={"name": "s3", "config": s3_sink("s3")})
    assert sink.status_code == 201, sink.text
    assert_no_secret("POST /connectors (s3)", sink.text)

    leaky = {
        "connector.class": "LeakySource",
        "endpoint": f"https://svc:{URL_PASSWORD}@127.0.0.1:{CLOSED_PORT}/login",
        "auth.bearer": TOKEN,
    }
    assert http.put("/connectors/leaky/config", json=leaky).status_code == 201
    leaked = wait_for_rest(lambda: _failed(worker, "leaky"), "the leaky task FAILED")
    assert "refused for token [hidden]" in json.dumps(leaked), leaked
    assert_no_secret("GET /connectors/leaky/status", leaked)

    for path in (
        "/connectors?expand=info&expand=status",
        "/connectors/leaky/tasks",
        "/connectors/db",
        "/connectors/db/config",
        "/connectors/db/tasks",
        "/connectors/db/status",
        "/connectors/s3",
        "/connectors/s3/config",
        "/connectors/s3/tasks",
        "/connectors/s3/status",
    ):
        response = http.get(path)
        assert response.status_code == 200, (path, response.text)
        assert_no_secret(f"GET {path}", response.text)
    for task in http.get("/connectors/db/status").json()["tasks"]:
        assert_no_secret("task status", http.get(f"/connectors/db/tasks/{task['id']}/status").text)

    validated = http.put(
        "/connector-plugins/JdbcSourceConnector/config/validate", json=jdbc_source("v")
    )
    assert validated.status_code == 200, validated.text
    assert validated.json()["error_count"] >= 1  # check(): the database does not answer
    assert_no_secret("PUT .../config/validate", validated.text)

    bad = jdbc_source("bad", **{"tasks.max": "many"})
    bad["connection.url"] = f"postgresql://sluice:{URL_PASSWORD}@127.0.0.1:port/db"
    refused = http.post("/connectors", json={"name": "bad", "config": bad})
    assert refused.status_code == 400, refused.text
    assert_no_secret("400 of a bad config", refused.text)
    mismatch = http.put("/connectors/other/config", json=jdbc_source("bad"))
    assert mismatch.status_code == 400
    assert_no_secret("400 of a name mismatch", mismatch.text)


def test_the_console_shows_no_secret(worker: StandaloneProcess) -> None:
    good = jdbc_source("file-db")
    worker.write_pipeline("file-db", "".join(f"{k}={_escape(v)}\n" for k, v in good.items()))
    broken = jdbc_source("file-bad", **{"mode": "sideways"})
    worker.write_pipeline("file-bad", "".join(f"{k}={_escape(v)}\n" for k, v in broken.items()))
    pipelines = wait_for_rest(
        lambda: _with_files(worker.http.get("/ui/api/pipelines").json(), 2), "both files listed"
    )
    assert any(f["problems"] for f in pipelines["files"])
    assert_no_secret("/ui/api/pipelines", pipelines)
    wait_for_rest(lambda: _failed(worker, "file-db"), "the file's source FAILED")
    listing = worker.http.get("/connectors?expand=info&expand=status")
    assert_no_secret("GET /connectors (pipeline files)", listing.text)
    assert_no_secret("/ui/api/topics", worker.http.get("/ui/api/topics").text)


def _with_files(body: dict[str, Any], count: int) -> dict[str, Any]:
    if len(body["files"]) < count:
        raise KeyError("not yet")
    return body


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def _sluice(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", "--log-level", "debug", *args],
        capture_output=True, text=True, timeout=120, check=False, input=stdin,
        env={**os.environ},
    )  # fmt: skip


def test_the_cli_shows_no_secret(worker: StandaloneProcess, tmp_path: Path) -> None:
    wait_for_rest(lambda: _failed(worker, "db"), "db FAILED")
    for name in ("db", "leaky"):
        status = _sluice("connectors", "status", name, "--url", worker.url)
        assert status.returncode == 0, status.stderr
        assert "FAILED" in status.stdout
        assert_no_secret("sluice connectors status", status.stdout + status.stderr)
    as_json = _sluice("connectors", "list", "--json", "--url", worker.url)
    assert_no_secret("sluice connectors list --json", as_json.stdout + as_json.stderr)

    pipeline = tmp_path / "db.properties"
    pipeline.write_text("".join(f"{k}={_escape(v)}\n" for k, v in jdbc_source("db").items()))
    validated = _sluice("validate", str(pipeline))
    assert validated.returncode == 1  # check(): no database
    assert_no_secret("sluice validate", validated.stdout + validated.stderr)
    broken = tmp_path / "broken.properties"
    broken.write_text(pipeline.read_text() + "mode=sideways\n")
    invalid = _sluice("validate", str(broken))
    assert invalid.returncode == 1
    assert_no_secret("sluice validate (invalid)", invalid.stdout + invalid.stderr)

    dry = _sluice("test", str(pipeline), stdin='{"value": {"id": 1}}\n')
    assert_no_secret("sluice test", dry.stdout + dry.stderr)


def test_the_debug_log_shows_no_secret(worker: StandaloneProcess) -> None:
    wait_for_rest(lambda: _failed(worker, "db"), "db FAILED")
    wait_for_rest(lambda: _failed(worker, "leaky"), "leaky FAILED")
    log = worker.log_text()
    assert "logging in to https://svc:[hidden]@127.0.0.1" in log  # the plugin's DEBUG line
    assert "with token [hidden]" in log
    assert_no_secret("the worker's log", log)


def test_the_connector_configs_file_keeps_them_as_connect_does(worker: StandaloneProcess) -> None:
    """REST-created connectors persist as given, like Kafka Connect's config topic:
    plaintext unless the config uses ${file:...} providers (docs/security.md)."""
    stored = (worker.root / "connectors.json").read_text()
    assert PASSWORD in stored
    assert os.stat(worker.root / "connectors.json").st_mode & 0o077 == 0, "owner only"
