"""The one place errors become ``{"error_code", "message"}`` answers."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from connect_worker.herder.api import (
    AlreadyExistsError,
    BadRequestError,
    ConflictError,
    HerderError,
    NotFoundError,
)
from connect_worker.plugins import UnknownPluginError
from connect_worker.rest.errors import RestError, install_error_handlers


class Body(BaseModel):
    count: int


def build(raised: Exception) -> TestClient:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/raise")
    def fail() -> None:
        raise raised

    @app.post("/body")
    def take(body: Body) -> int:
        return body.count

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFoundError("Connector x not found"), 404),
        (AlreadyExistsError("Connector x already exists"), 409),
        (ConflictError("must be STOPPED"), 409),
        (BadRequestError("tasks.max: not a number\ntopic: required"), 400),
        (HerderError("worker is stopping"), 500),
        (UnknownPluginError("connector", "Nope", ["FileStreamSource"]), 404),
        (RestError(403, "not allowed"), 403),
        (RuntimeError("a bug"), 500),
    ],
)
def test_errors_map_to_kafka_connect_bodies(error: Exception, status: int) -> None:
    response = build(error).get("/raise")
    assert response.status_code == status
    assert response.json() == {"error_code": status, "message": response.json()["message"]}
    assert str(error).splitlines()[0] in response.json()["message"]


def test_request_problems_are_400_with_every_problem() -> None:
    client = build(RuntimeError())
    bad_json = client.post("/body", content=b"{nope", headers={"content-type": "application/json"})
    assert bad_json.status_code == 400 and "not valid JSON" in bad_json.json()["message"]
    wrong = client.post("/body", json={"count": "many"})
    assert wrong.status_code == 400 and "count" in wrong.json()["message"]


def test_routing_errors_use_the_same_body() -> None:
    client = build(RuntimeError())
    assert client.get("/nowhere").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    assert client.delete("/raise").json() == {
        "error_code": 405,
        "message": "HTTP 405 Method Not Allowed",
    }
