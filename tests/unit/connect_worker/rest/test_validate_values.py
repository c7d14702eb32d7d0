"""``PUT /connector-plugins/{p}/config/validate`` names each bad value (issue 14)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_validate_endpoint_names_the_bad_value(client: TestClient) -> None:
    url = "/connector-plugins/FileStreamSource/config/validate"
    body = {"name": "n", "file": "/tmp/f", "topic": "t", "tasks.max": "abc", "batch.size": "-5"}
    result = client.put(url, json=body).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in result["configs"]}
    assert any("(got 'abc')" in e for e in errors["tasks.max"]), errors["tasks.max"]
    assert any("(got '-5')" in e for e in errors["batch.size"]), errors["batch.size"]
