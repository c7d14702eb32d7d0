"""Every REST endpoint of a running ``sluice standalone``, with Kafka Connect's codes and shapes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.standalone_process import (
    StandaloneProcess,
    file_source,
    read_lines,
    wait_for_rest,
)


def source_config(name: str, path: Path, topic: str, **extra: str) -> dict[str, str]:
    config = {
        "name": name,
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": topic,
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    config.update(extra)
    return config


def assert_error(response: Any, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"} and body["error_code"] == status, body
    for word in words:
        assert word in body["message"], body
    return str(body["message"])


def test_worker_info_health_docs_and_errors(worker: StandaloneProcess) -> None:
    http = worker.http
    info = http.get("/").json()
    assert set(info) == {"version", "commit", "kafka_cluster_id"} and info["kafka_cluster_id"]
    assert http.get("/health").json()["status"] == "healthy"
    assert http.get("/docs").status_code == 200
    paths = http.get("/openapi.json").json()["paths"]
    assert "/connectors/{connector}/offsets" in paths and "/admin/loggers/{name}" in paths
    assert_error(http.get("/no/such/path"), 404)
    assert_error(http.delete("/connectors"), 405)
    bad_json = http.post(
        "/connectors", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert_error(bad_json, 400, "not valid JSON")
    assert_error(http.get("/connectors/nobody"), 404, "nobody")


def test_plugins_listing_config_and_validate(worker: StandaloneProcess, tmp_path: Path) -> None:
    http = worker.http
    connectors = http.get("/connector-plugins").json()
    assert {"source", "sink"} >= {p["type"] for p in connectors}
    assert all(set(p) >= {"class", "type", "version", "python_class"} for p in connectors)
    assert "org.apache.kafka.connect.file.FileStreamSourceConnector" in {
        p["class"] for p in connectors
    }
    classes = {p["class"].rsplit(".", 1)[-1] for p in connectors}
    assert {"FileStreamSourceConnector", "FileStreamSinkConnector"} <= classes
    everything = http.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    assert "converter" in {p["type"] for p in everything}

    definition = http.get("/connector-plugins/FileStreamSource/config").json()
    assert "file" in {entry["name"] for entry in definition}
    assert_error(http.get("/connector-plugins/NoSuchThing/config"), 404, "NoSuchThing")

    body = {"file": str(tmp_path / "x"), "topic": "t", "tasks.max": "abc"}
    result = http.put("/connector-plugins/FileStreamSource/config/validate", json=body)
    assert result.status_code == 200, result.text
    validation = result.json()
    assert {"name", "error_count", "groups", "configs"} <= set(validation)
    assert validation["error_count"] >= 1
    errors = {
        c["value"]["name"]: c["value"]["errors"]
        for c in validation["configs"]
        if c["value"]["errors"]
    }
    assert "tasks.max" in errors, validation
    good = http.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={"name": "v", "file": str(tmp_path / "x"), "topic": "t"},
    ).json()
    assert good["error_count"] == 0, good
    mismatch = http.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={"connector.class": "FileStreamSink", "file": "x", "topics": "t"},
    )
    assert_error(mismatch, 400, "does not match")


def test_connector_crud_and_config(worker: StandaloneProcess, tmp_path: Path) -> None:
    http = worker.http
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\n")
    config = source_config("rest-crud", source, "rest-crud")
    created = http.post("/connectors", json={"name": "rest-crud", "config": config})
    assert created.status_code == 201, created.text
    assert created.headers["location"].endswith("/connectors/rest-crud")
    info = created.json()
    assert set(info) == {"name", "config", "tasks", "type"} and info["type"] == "source"
    assert_error(http.post("/connectors", json={"name": "rest-crud", "config": config}), 409)

    broken = {"connector.class": "FileStreamSource", "tasks.max": "abc"}
    message = assert_error(http.post("/connectors", json={"name": "b", "config": broken}), 400)
    assert "tasks.max" in message and "topic" in message  # every problem, not the first
    assert "b" not in http.get("/connectors").json()

    worker.wait_running("rest-crud")
    assert "rest-crud" in http.get("/connectors").json()
    expanded = http.get("/connectors", params=[("expand", "status"), ("expand", "info")]).json()
    assert set(expanded["rest-crud"]) == {"status", "info"}
    assert expanded["rest-crud"]["info"]["config"]["file"] == str(source)
    one = http.get("/connectors/rest-crud").json()
    assert one["tasks"] == [{"connector": "rest-crud", "task": 0}]
    assert http.get("/connectors/rest-crud/config").json()["topic"] == "rest-crud"

    replaced = http.put("/connectors/rest-crud/config", json={**config, "batch.size": "5"})
    assert replaced.status_code == 200 and replaced.json()["config"]["batch.size"] == "5"
    patched = http.patch("/connectors/rest-crud/config", json={"batch.size": None, "tasks.max": 1})
    assert patched.status_code == 200, patched.text
    assert "batch.size" not in patched.json()["config"]
    mismatch = http.put("/connectors/rest-crud/config", json={**config, "name": "other"})
    assert_error(mismatch, 400, "doesn't match")

    put_new = http.put("/connectors/rest-put/config", json=source_config("rest-put", source, "p"))
    assert put_new.status_code == 201 and put_new.headers["location"].endswith("/rest-put")
    assert http.delete("/connectors/rest-put").status_code == 204
    assert_error(http.get("/connectors/rest-put"), 404)
    assert_error(http.delete("/connectors/rest-put"), 404)


def test_status_tasks_and_state_changes(worker: StandaloneProcess, tmp_path: Path) -> None:
    http = worker.http
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    config = source_config("rest-states", source, "rest-states")
    assert http.post("/connectors", json={"name": "rest-states", "config": config}).is_success
    worker.wait_running("rest-states")
    status = http.get("/connectors/rest-states/status").json()
    assert set(status) >= {"name", "connector", "tasks", "type"}
    assert set(status["connector"]) >= {"state", "worker_id"}
    assert set(status["tasks"][0]) >= {"id", "state", "worker_id"}
    tasks = http.get("/connectors/rest-states/tasks").json()
    assert tasks[0]["id"] == {"connector": "rest-states", "task": 0}
    assert tasks[0]["config"]
    task = http.get("/connectors/rest-states/tasks/0/status").json()
    assert task["id"] == 0 and task["state"] == "RUNNING"
    assert_error(http.get("/connectors/rest-states/tasks/9/status"), 404)
    assert_error(http.get("/connectors/rest-states/tasks/x/status"), 400)

    assert http.post("/connectors/rest-states/tasks/0/restart").status_code == 204
    worker.wait_running("rest-states")
    assert http.post("/connectors/rest-states/restart").status_code == 204
    restarted = http.post("/connectors/rest-states/restart", params={"includeTasks": "true"})
    assert restarted.status_code == 202, restarted.text
    assert restarted.json()["name"] == "rest-states" and "tasks" in restarted.json()
    only_failed = http.post(
        "/connectors/rest-states/restart", params={"includeTasks": "true", "onlyFailed": "true"}
    )
    assert only_failed.status_code == 202
    worker.wait_running("rest-states")

    assert http.put("/connectors/rest-states/pause").status_code == 202
    wait_for_rest(lambda: worker.state("rest-states") == "PAUSED", "PAUSED")
    assert http.put("/connectors/rest-states/resume").status_code == 202
    worker.wait_running("rest-states")
    assert http.put("/connectors/rest-states/stop").status_code == 204
    wait_for_rest(lambda: worker.state("rest-states") == "STOPPED", "STOPPED")
    stopped = worker.status("rest-states")
    assert stopped is not None and stopped["tasks"] == []
    assert http.put("/connectors/rest-states/resume").status_code == 202
    worker.wait_running("rest-states")
    assert_error(http.put("/connectors/nobody/pause"), 404)
    assert http.delete("/connectors/rest-states").status_code == 204


def test_topics_and_offsets(worker: StandaloneProcess, tmp_path: Path) -> None:
    http = worker.http
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(10)))
    config = source_config("rest-offsets", source, "rest-offsets-topic")
    assert http.post("/connectors", json={"name": "rest-offsets", "config": config}).is_success

    def topics() -> list[str]:
        return http.get("/connectors/rest-offsets/topics").json()["rest-offsets"]["topics"]

    wait_for_rest(lambda: topics() == ["rest-offsets-topic"], "the topic the connector used")
    offsets = wait_for_rest(
        lambda: http.get("/connectors/rest-offsets/offsets").json()["offsets"], "source offsets"
    )
    assert set(offsets[0]) == {"partition", "offset"}
    entry = {"partition": offsets[0]["partition"], "offset": offsets[0]["offset"]}
    running_patch = http.patch("/connectors/rest-offsets/offsets", json={"offsets": [entry]})
    assert running_patch.status_code in (400, 409)  # must be STOPPED first
    assert_error(http.patch("/connectors/rest-offsets/offsets", json={"offsets": []}), 400)

    assert http.put("/connectors/rest-offsets/stop").status_code == 204
    wait_for_rest(lambda: worker.state("rest-offsets") == "STOPPED", "STOPPED")
    altered = http.patch("/connectors/rest-offsets/offsets", json={"offsets": [entry]})
    assert altered.status_code == 200 and "altered" in altered.json()["message"]
    reset = http.delete("/connectors/rest-offsets/offsets")
    assert reset.status_code == 200 and "reset" in reset.json()["message"]
    assert http.get("/connectors/rest-offsets/offsets").json() == {"offsets": []}
    topics_reset = http.put("/connectors/rest-offsets/topics/reset")
    assert topics_reset.status_code == 202, topics_reset.text
    assert http.delete("/connectors/rest-offsets").status_code == 204


def test_admin_loggers(worker: StandaloneProcess) -> None:
    http = worker.http
    loggers = http.get("/admin/loggers").json()
    assert "root" in loggers and set(loggers["root"]) == {"level", "last_modified"}
    changed = http.put("/admin/loggers/connect_worker.watch", json={"level": "DEBUG"})
    assert changed.status_code == 200 and "connect_worker.watch" in changed.json()
    one = http.get("/admin/loggers/connect_worker.watch").json()
    assert one["level"] == "DEBUG" and one["last_modified"]
    assert "connect_worker.watch" in http.get("/admin/loggers").json()
    assert_error(http.put("/admin/loggers/connect_worker.watch", json={"level": "LOUD"}), 404)
    assert_error(http.put("/admin/loggers/connect_worker.watch", json={}), 400)
    assert http.put("/admin/loggers/connect_worker.watch", json={"level": "INFO"}).is_success
    assert_error(http.get("/admin/loggers/no.such.logger"), 404)


def test_pipeline_file_flows_to_sink(worker: StandaloneProcess, tmp_path: Path) -> None:
    """A source pipeline file and a sink created over REST move lines end to end."""
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"rest {i}\n" for i in range(50)))
    worker.write_pipeline("rest-flow-src", file_source("rest-flow-src", source, "rest-flow"))
    sink = {
        "connector.class": "FileStreamSink",
        "file": str(out),
        "topics": "rest-flow",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    assert worker.http.post(
        "/connectors", json={"name": "rest-flow-sink", "config": sink}
    ).is_success
    expected = [f"rest {i}" for i in range(50)]
    wait_for_rest(lambda: read_lines(out) == expected, "the lines in the sink's file")


def test_bad_names_and_huge_bodies_are_refused_quietly(
    worker: StandaloneProcess, tmp_path: Path
) -> None:
    http = worker.http
    config = source_config("ignored", tmp_path / "in.txt", "names")
    before = set(http.get("/connectors").json())

    def attempt() -> None:
        for name in ("a/b", "../../evil", "bell\x07", "n" * 250):
            body = {"name": name, "config": {**config, "name": name}}
            assert_error(http.post("/connectors", json=body), 400, "Invalid connector name")
        huge = {"name": "x" * (10 << 20), "config": config}
        assert_error(http.post("/connectors", json=huge), 413, "rest.request.max.bytes")
        chunked = http.post(
            "/connectors",
            content=iter([b'{"name": "', b"y" * (2 << 20), b'"}']),
            headers={"content-type": "application/json"},
        )
        assert_error(chunked, 413, "rest.request.max.bytes")

    attempt()
    size = worker.log_path.stat().st_size
    for _ in range(20):
        attempt()
    assert worker.log_path.stat().st_size - size < 2000, worker.log_text()[-3000:]
    assert set(http.get("/connectors").json()) == before
