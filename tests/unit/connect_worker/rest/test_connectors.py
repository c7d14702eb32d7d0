"""``/connectors`` over a real StandaloneHerder: codes and JSON shapes as Kafka Connect's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from fastapi.testclient import TestClient

from harness.wait import wait_for

STRING = "org.apache.kafka.connect.storage.StringConverter"


def source(tmp_path: Path, topic: str, **extra: str) -> dict[str, str]:
    path = tmp_path / "in.txt"
    if not path.exists():
        path.write_text("a\nb\n")
    return {
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": topic,
        "value.converter": STRING,
        **extra,
    }


def state_of(client: TestClient, name: str) -> str | None:
    response = client.get(f"/connectors/{name}/status")
    return response.json()["connector"]["state"] if response.status_code == 200 else None


def task_states(client: TestClient, name: str) -> list[str]:
    return [t["state"] for t in client.get(f"/connectors/{name}/status").json()["tasks"]]


def test_root_and_health(client: TestClient) -> None:
    root = client.get("/").json()
    assert root["kafka_cluster_id"] == "test-cluster" and root["version"]
    assert client.get("/health").json() == {
        "status": "healthy",
        "message": "Worker has completed startup and is ready to handle requests.",
    }


def test_create_read_replace_patch_delete(
    client: TestClient, tmp_path: Path, topic_name: str
) -> None:
    config = source(tmp_path, topic_name)
    created = client.post("/connectors", json={"name": " c1 ", "config": config})
    assert created.status_code == 201, created.text
    assert created.headers["location"] == "/connectors/c1"
    assert created.json()["name"] == "c1" and created.json()["config"]["name"] == "c1"
    assert client.post("/connectors", json={"name": "c1", "config": config}).status_code == 409
    assert client.get("/connectors").json() == ["c1"]
    assert client.get("/connectors/c1/config").json()["topic"] == topic_name

    replaced = client.put("/connectors/c1/config", json={**config, "batch.size": 10})
    assert replaced.status_code == 200 and replaced.json()["config"]["batch.size"] == "10"
    patched = client.patch("/connectors/c1/config", json={"batch.size": None})
    assert "batch.size" not in patched.json()["config"]
    assert client.patch("/connectors/c1/config", json={"name": "c2"}).status_code == 400
    assert client.patch("/connectors/none/config", json={"a": "b"}).status_code == 404

    assert client.delete("/connectors/c1").status_code == 204
    assert client.get("/connectors/c1").json()["error_code"] == 404
    assert client.get("/connectors").json() == []


def test_invalid_configs_list_every_problem(client: TestClient) -> None:
    response = client.post(
        "/connectors",
        json={"name": "bad", "config": {"connector.class": "FileStreamSource", "tasks.max": "x"}},
    )
    assert response.status_code == 400
    message = response.json()["message"]
    assert "tasks.max" in message and "topic" in message and "file" in message
    unknown = client.post("/connectors", json={"name": "u", "config": {"connector.class": "Nope"}})
    assert unknown.status_code == 400 and "Nope" in unknown.json()["message"]
    nameless = client.post("/connectors", json={"config": {"connector.class": "Nope"}})
    assert nameless.status_code == 400 and "name" in nameless.json()["message"]
    assert client.post("/connectors", json={"name": "n"}).status_code == 400  # no config


def test_expand_status_and_info(client: TestClient, tmp_path: Path, topic_name: str) -> None:
    client.post("/connectors", json={"name": "ex", "config": source(tmp_path, topic_name)})
    statuses = client.get("/connectors?expand=status").json()
    assert set(statuses["ex"]) == {"status"}
    both = client.get("/connectors?expand=status&expand=info").json()["ex"]
    assert both["info"]["tasks"] == [{"connector": "ex", "task": 0}]
    assert both["status"]["type"] == "source"


def test_states_restart_and_tasks(client: TestClient, tmp_path: Path, topic_name: str) -> None:
    client.post("/connectors", json={"name": "st", "config": source(tmp_path, topic_name)})
    wait_for(lambda: task_states(client, "st") == ["RUNNING"], "the task to run")
    tasks = client.get("/connectors/st/tasks").json()
    assert [t["id"] for t in tasks] == [{"connector": "st", "task": 0}]
    assert tasks[0]["config"]["topic"] == topic_name
    assert client.get("/connectors/st/tasks/0/status").json()["state"] == "RUNNING"
    assert client.get("/connectors/st/tasks/3/status").status_code == 404
    assert client.post("/connectors/st/tasks/0/restart").status_code == 204
    assert client.post("/connectors/st/tasks/5/restart").status_code == 404
    assert client.post("/connectors/st/restart").status_code == 204
    restarting = client.post("/connectors/st/restart?includeTasks=true&onlyFailed=false")
    assert restarting.status_code == 202
    assert set(restarting.json()) >= {"name", "connector", "tasks", "type"}

    assert client.put("/connectors/st/pause").status_code == 202
    wait_for(lambda: state_of(client, "st") == "PAUSED", "PAUSED")
    assert client.put("/connectors/st/stop").status_code == 204
    wait_for(lambda: state_of(client, "st") == "STOPPED", "STOPPED")
    assert client.get("/connectors/st").json()["tasks"] == []
    assert client.put("/connectors/st/resume").status_code == 202
    wait_for(lambda: task_states(client, "st") == ["RUNNING"], "running again")
    assert client.put("/connectors/zz/pause").status_code == 404


def test_offsets_need_stopped(client: TestClient, tmp_path: Path, topic_name: str) -> None:
    client.post("/connectors", json={"name": "off", "config": source(tmp_path, topic_name)})
    offsets = wait_for(
        lambda: client.get("/connectors/off/offsets").json()["offsets"], "offsets to be flushed"
    )
    assert offsets[0]["offset"]["position"] == 4
    body = {"offsets": [{"partition": offsets[0]["partition"], "offset": {"position": 2}}]}
    assert client.patch("/connectors/off/offsets", json=body).status_code == 409
    assert client.patch("/connectors/off/offsets", json={"offsets": [{"x": 1}]}).status_code == 400
    client.put("/connectors/off/stop")
    altered = client.patch("/connectors/off/offsets", json=body)
    assert altered.status_code == 200, altered.text
    assert client.get("/connectors/off/offsets").json()["offsets"][0]["offset"] == {"position": 2}
    assert client.delete("/connectors/off/offsets").status_code == 200
    assert client.get("/connectors/off/offsets").json() == {"offsets": []}


def test_topics(client: TestClient, tmp_path: Path, topic_name: str) -> None:
    client.post("/connectors", json={"name": "tp", "config": source(tmp_path, topic_name)})
    wait_for(
        lambda: client.get("/connectors/tp/topics").json() == {"tp": {"topics": [topic_name]}},
        "the topic to be recorded",
    )
    assert client.put("/connectors/tp/topics/reset").status_code == 202
    assert client.get("/connectors/tp/topics").json() == {"tp": {"topics": []}}
    assert client.put("/connectors/none/topics/reset").status_code == 404


def test_bad_connector_names_are_refused_and_nothing_is_created(
    client: TestClient, tmp_path: Path, topic_name: str
) -> None:
    bad = ["a/b", "../../evil", "tab\there", "bell\x07", "x" * 250, ".", "..", "back\\slash"]
    for name in bad:
        body = {"name": name, "config": source(tmp_path, topic_name)}
        response = client.post("/connectors", json=body)
        assert response.status_code == 400, (name, response.text)
        assert response.json()["error_code"] == 400
        assert "connector names are 1 to 249 characters" in response.json()["message"]
    for name in ("tab\there", "bell\x07", "x" * 250, "trailing "):
        path = f"/connectors/{quote(name, safe='')}/config"
        response = client.put(path, json=source(tmp_path, topic_name))
        assert response.status_code == 400, (name, response.text)
        assert "Invalid connector name" in response.json()["message"]
    assert client.get("/connectors").json() == []


def test_request_bodies_are_bounded(client: TestClient, tmp_path: Path, topic_name: str) -> None:
    huge = {"name": "x" * (10 << 20), "config": source(tmp_path, topic_name)}
    response = client.post("/connectors", json=huge)
    assert response.status_code == 413, response.text[:200]
    assert response.json()["error_code"] == 413
    assert "rest.request.max.bytes" in response.json()["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the body is counted as it comes
        yield b'{"name": "'
        for _ in range(20):
            yield b"y" * 100_000
        yield b'", "config": {}}'

    chunked = client.post(
        "/connectors", content=chunks(), headers={"content-type": "application/json"}
    )
    assert chunked.status_code == 413, chunked.text[:200]
    assert "rest.request.max.bytes" in chunked.json()["message"]
    assert client.get("/connectors").json() == []
