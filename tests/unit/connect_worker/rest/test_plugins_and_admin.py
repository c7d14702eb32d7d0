"""``/connector-plugins`` and ``/admin/loggers``."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi.testclient import TestClient


def test_plugin_listing(client: TestClient) -> None:
    connectors = client.get("/connector-plugins").json()
    assert {p["type"] for p in connectors} == {"source", "sink"}
    assert {
        "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "type": "source",
        "version": connectors[0]["version"],
        "python_class": "connectors.file.source.FileStreamSourceConnector",
        "aliases": ["FileStreamSource", "FileStreamSourceConnector"],
    } in connectors
    everything = client.get("/connector-plugins/?connectorsOnly=false").json()
    kinds = {p["type"] for p in everything}
    assert {"source", "sink", "converter", "header_converter"} <= kinds
    assert "config_provider" not in kinds


def test_plugin_config_definitions(client: TestClient) -> None:
    for name in ("FileStreamSource", "org.apache.kafka.connect.file.FileStreamSourceConnector"):
        keys = {entry["name"] for entry in client.get(f"/connector-plugins/{name}/config").json()}
        assert {"file", "topic", "batch.size"} <= keys
    converter = client.get("/connector-plugins/JsonConverter/config")
    assert converter.status_code == 200 and converter.json()
    missing = client.get("/connector-plugins/FileStreamSorce/config")
    assert missing.status_code == 404 and "FileStreamSource" in missing.json()["message"]


def test_validate(client: TestClient, tmp_path: Path) -> None:
    url = "/connector-plugins/FileStreamSource/config/validate"
    result = client.put(url, json={"file": str(tmp_path / "f"), "tasks.max": "0"}).json()
    assert "FileStreamSource" in result["name"]
    assert result["error_count"] >= 2  # tasks.max and the missing topic
    with_errors = {c["value"]["name"] for c in result["configs"] if c["value"]["errors"]}
    assert {"tasks.max", "topic"} <= with_errors
    clean = client.put(url, json={"name": "n", "file": "f", "topic": "t"}).json()
    assert clean["error_count"] == 0
    same = client.put(url, json={"connector.class": "FileStreamSourceConnector", "topic": "t"})
    assert same.status_code == 200
    other = client.put(url, json={"connector.class": "FileStreamSink", "topics": "t"})
    assert other.status_code == 400


def test_loggers(client: TestClient) -> None:
    named = logging.getLogger("sluice.resttest.child")
    named.setLevel(logging.ERROR)
    try:
        assert client.get("/admin/loggers").json()["sluice.resttest.child"]["level"] == "ERROR"
        changed = client.put("/admin/loggers/sluice.resttest", json={"level": "warn"})
        assert changed.status_code == 200
        assert "sluice.resttest.child" in changed.json()
        assert named.level == logging.WARNING
        one = client.get("/admin/loggers/sluice.resttest").json()
        assert one["level"] == "WARN" and isinstance(one["last_modified"], int)
        trace = client.put("/admin/loggers/sluice.resttest", json={"level": "TRACE"})
        assert trace.status_code == 200
        assert client.get("/admin/loggers/sluice.resttest.child").json()["level"] == "TRACE"
        cluster = client.put("/admin/loggers/sluice.resttest?scope=cluster", json={"level": "INFO"})
        assert cluster.status_code == 204
        assert client.put("/admin/loggers/x", json={"level": "LOUD"}).status_code == 404
        assert client.put("/admin/loggers/x", json={}).status_code == 400
        assert client.get("/admin/loggers/never.made.logger").status_code == 404
    finally:
        logging.getLogger("sluice.resttest").setLevel(logging.NOTSET)
        named.setLevel(logging.NOTSET)
