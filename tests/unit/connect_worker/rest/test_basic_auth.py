"""Basic authentication in front of the REST API (Connect's BasicAuthSecurityRestExtension)."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from connect_worker.herder.forwarding import CALLER_AUTHORIZATION
from connect_worker.herder.request_signing import (
    new_session_key,
    worker_signature_header,
    worker_signature_valid,
)
from connect_worker.rest import create_app
from connect_worker.rest.basic_auth import BasicAuth, basic_credentials
from connect_worker.security.jaas_file import (
    JaasFileError,
    RestUsers,
    jaas_file_from_env,
    load_rest_users,
)

MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"


def _jaas(tmp_path: Path, users: str = "alice: alice-secret\nbob=bob:colon\n") -> Path:
    (tmp_path / "users.properties").write_text(users)
    jaas = tmp_path / "connect_jaas.conf"
    jaas.write_text(
        "// Kafka Connect's layout\n"
        "KafkaServer { other.Module required; };\n"
        f'KafkaConnect {{\n  {MODULE} required\n  file="users.properties";\n}};\n'
    )
    return jaas


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def users(tmp_path: Path) -> RestUsers:
    return load_rest_users(_jaas(tmp_path))


@pytest.fixture
def client(users: RestUsers) -> TestClient:
    return TestClient(create_app(None, None, basic_auth_users=users))


def test_the_jaas_file_names_the_users_file(users: RestUsers) -> None:
    assert users.check("alice", "alice-secret")
    assert users.check("bob", "bob:colon")  # only the first colon of a header separates
    assert not users.check("alice", "wrong")
    assert not users.check("mallory", "alice-secret")


def test_bad_jaas_files_are_clear_errors_without_passwords(tmp_path: Path) -> None:
    jaas = tmp_path / "jaas.conf"
    jaas.write_text('Other { x.Y required; };')
    with pytest.raises(JaasFileError, match="no KafkaConnect"):
        load_rest_users(jaas)
    jaas.write_text('KafkaConnect { x.Y required file="u"; };')
    with pytest.raises(JaasFileError, match=r"x\.Y is not supported"):
        load_rest_users(jaas)
    jaas.write_text(f"KafkaConnect {{ {MODULE} required; }};")
    with pytest.raises(JaasFileError, match='file="<users'):
        load_rest_users(jaas)
    with pytest.raises(JaasFileError, match="names no user"):
        load_rest_users(_jaas(tmp_path, users="# nobody\n"))
    with pytest.raises(JaasFileError, match="cannot read"):
        load_rest_users(tmp_path / "missing.conf")


def test_the_jaas_file_from_kafka_opts() -> None:
    opts = "-Xmx1g -Djava.security.auth.login.config=/etc/kafka/connect_jaas.conf -Dx=y"
    assert jaas_file_from_env(opts) == Path("/etc/kafka/connect_jaas.conf")
    assert jaas_file_from_env("-Djava.security.auth.login.config==/a.conf") == Path("/a.conf")
    assert jaas_file_from_env("-Xmx1g") is None
    assert jaas_file_from_env(None) is None


def test_no_wrong_and_right_credentials(client: TestClient) -> None:
    bearer = {"Authorization": "Bearer t"}
    for headers in ({}, _basic("alice", "wrong"), _basic("nobody", "x"), bearer):
        response = client.get("/connectors", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["WWW-Authenticate"].startswith("Basic realm=")
        assert response.json() == {
            "error_code": 401, "message": "User cannot access the resource."
        }
    # authenticated: the worker is still starting (no herder), so 503, not 401
    assert client.get("/connectors", headers=_basic("alice", "alice-secret")).status_code == 503


@pytest.mark.parametrize("path", ["/health", "/metrics", "/ui/", "/docs", "/openapi.json", "/"])
def test_every_path_is_behind_it_as_in_connect(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 401
    assert client.get(path, headers=_basic("alice", "alice-secret")).status_code != 401


def test_malformed_headers_are_no_credentials() -> None:
    assert basic_credentials("Basic !!!") is None
    assert basic_credentials("Basic " + base64.b64encode(b"no-colon").decode()) is None
    assert basic_credentials("Basic " + base64.b64encode(b":pw").decode()) is None
    assert basic_credentials("basic " + base64.b64encode(b"a:b:c").decode()) == ("a", "b:c")


def test_the_internal_task_configs_request_passes_to_its_signature_check(
    client: TestClient,
) -> None:
    """Connect lets POST /connectors/{c}/tasks through; its handler checks KIP-507."""
    assert client.post("/connectors/c/tasks", content=b"[]").status_code == 503
    assert client.put("/connectors/c/tasks", content=b"[]").status_code == 401
    assert client.get("/connectors/c/tasks").status_code == 401


def test_a_refused_request_body_is_never_read(users: RestUsers) -> None:
    """401 comes before the body: the app's receive is never called."""
    reached: list[str] = []
    received: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    async def receive() -> dict[str, Any]:
        received.append("read")
        return {"type": "http.request", "body": b"{}", "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "method": "POST", "path": "/connectors", "headers": [
            (b"content-length", b"2"), *_raw(_basic("alice", "wrong")),
        ],
    }
    asyncio.run(BasicAuth(app, users, 1 << 20)(scope, receive, send))
    assert reached == [] and received == []
    assert sent[0]["status"] == 401


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in headers.items()]


def test_the_callers_credentials_are_kept_for_forwarding(users: RestUsers) -> None:
    seen: list[str | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(CALLER_AUTHORIZATION.get())

    async def nothing() -> dict[str, Any]:
        raise AssertionError("not read")

    async def ignore(message: dict[str, Any]) -> None:
        pass

    headers = _basic("alice", "alice-secret")
    scope = {"type": "http", "method": "GET", "path": "/", "headers": _raw(headers)}
    asyncio.run(BasicAuth(app, users, 1 << 20)(scope, nothing, ignore))
    assert seen == [headers["Authorization"]]
    assert CALLER_AUTHORIZATION.get() is None


class _SignedHerder:
    """Only what the middleware asks a distributed herder: is this worker request signed?"""

    def __init__(self) -> None:
        self.key = new_session_key()

    def verify_worker_request(self, method: str, target: bytes, body: bytes, header: str) -> bool:
        return worker_signature_valid(self.key, method, target, body, header)


def test_a_request_a_worker_signed_for_itself_passes(users: RestUsers) -> None:
    app = create_app(None, None, basic_auth_users=users)
    herder = _SignedHerder()
    app.state.herder = herder
    client = TestClient(app)
    body = b'{"name": "x", "config": {}}'
    request = httpx.Request("POST", "http://testserver/connectors?a=1", content=body)
    signed = worker_signature_header(herder.key, "POST", request.url.raw_path, body)
    # past the gate: the (fake) herder has no connectors API, so not 401 is all we ask
    passed = client.post("/connectors?a=1", content=body, headers=signed)
    assert passed.status_code != 401
    assert client.post("/connectors?a=2", content=body, headers=signed).status_code == 401
    assert client.post("/connectors?a=1", content=body + b" ", headers=signed).status_code == 401
    other = worker_signature_header(new_session_key(), "POST", request.url.raw_path, body)
    assert client.post("/connectors?a=1", content=body, headers=other).status_code == 401


def test_worker_signatures_expire() -> None:
    key = new_session_key()
    header = worker_signature_header(key, "DELETE", b"/connectors/a", b"", now_ms=1_000_000)
    value = header["X-Sluice-Worker-Authorization"]
    assert worker_signature_valid(key, "DELETE", b"/connectors/a", b"", value, now_ms=1_000_000)
    assert not worker_signature_valid(key, "DELETE", b"/connectors/a", b"", value, now_ms=10**9)
    assert not worker_signature_valid(key, "DELETE", b"/connectors/b", b"", value, now_ms=1_000_000)
    assert not worker_signature_valid(key, "PUT", b"/connectors/a", b"", value, now_ms=1_000_000)


def test_a_websocket_without_credentials_is_closed(users: RestUsers) -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "websocket", "path": "/anything", "headers": []}
    asyncio.run(BasicAuth(app, users, 1 << 20)(scope, receive, send))
    assert reached == [] and sent == [{"type": "websocket.close", "code": 1008}]
