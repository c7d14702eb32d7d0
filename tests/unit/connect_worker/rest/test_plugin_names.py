"""``/connector-plugins`` speaks the class names Kafka Connect users write (issue 14, item 5).

The list shows the Kafka class name in ``class`` (the Python path stays in
``python_class``); the config and validate endpoints accept the Kafka name, an
alias, the Python path and a Python path from before a module moved.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

FILE_SOURCE_NAMES = (
    "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "FileStreamSource",
    "connectors.file.source.FileStreamSourceConnector",
    "connectors.source.file.FileStreamSourceConnector",  # the path before the family moved
)
CAST_VALUE_NAMES = (
    "org.apache.kafka.connect.transforms.Cast$Value",
    "Cast$Value",
    "transforms.cast.CastValue",
)


def _by_python_class(listing: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {entry["python_class"]: entry for entry in listing}


def test_connector_list_shows_kafka_class_names(client: TestClient) -> None:
    listing = client.get("/connector-plugins").json()
    by_path = _by_python_class(listing)
    assert by_path["connectors.file.source.FileStreamSourceConnector"] == {
        "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "type": "source",
        "version": by_path["connectors.file.source.FileStreamSourceConnector"]["version"],
        "python_class": "connectors.file.source.FileStreamSourceConnector",
        "aliases": ["FileStreamSource", "FileStreamSourceConnector"],
    }
    debezium = by_path["connectors.postgres_cdc.source.PostgresCdcConnector"]
    assert debezium["class"] == "io.debezium.connector.postgresql.PostgresConnector"
    # no Kafka name: the Python path is the class name
    spark = by_path["spark_sinks.sink_connector.SparkSinkConnector"]
    assert spark["class"] == "spark_sinks.sink_connector.SparkSinkConnector"
    assert spark["type"] == "sink"
    assert {entry["type"] for entry in listing} == {"source", "sink"}


def test_all_plugins_list_transforms_predicates_and_converters(client: TestClient) -> None:
    listing = client.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    classes = {(entry["class"], entry["type"]) for entry in listing}
    assert {
        ("org.apache.kafka.connect.transforms.Cast$Value", "transformation"),
        ("io.debezium.transforms.ExtractNewRecordState", "transformation"),
        ("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicate"),
        ("org.apache.kafka.connect.json.JsonConverter", "converter"),
        ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter"),
    } <= classes
    assert {entry["type"] for entry in listing} == {
        "source", "sink", "converter", "header_converter", "transformation", "predicate"
    }
    assert all(entry["python_class"] for entry in listing)


@pytest.mark.parametrize("name", FILE_SOURCE_NAMES + CAST_VALUE_NAMES)
def test_config_definition_by_any_name(client: TestClient, name: str) -> None:
    response = client.get(f"/connector-plugins/{quote(name, safe='')}/config")
    assert response.status_code == 200, response.text
    keys = {entry["name"] for entry in response.json()}
    assert keys & {"topic", "spec"}, keys


@pytest.mark.parametrize("url_name", FILE_SOURCE_NAMES)
@pytest.mark.parametrize("body_name", [None, *FILE_SOURCE_NAMES])
def test_validate_by_any_name(
    client: TestClient, tmp_path: Path, url_name: str, body_name: str | None
) -> None:
    body = {"name": "n", "file": str(tmp_path / "f"), "topic": "t"}
    if body_name is not None:
        body["connector.class"] = body_name
    url = f"/connector-plugins/{quote(url_name, safe='')}/config/validate"
    response = client.put(url, json=body)
    assert response.status_code == 200, response.text
    assert response.json()["error_count"] == 0, response.json()


def test_validate_refuses_another_plugin_under_any_name(client: TestClient) -> None:
    url = f"/connector-plugins/{FILE_SOURCE_NAMES[0]}/config/validate"
    old_sink_path = "connectors.sink.file.FileStreamSinkConnector"
    response = client.put(url, json={"connector.class": old_sink_path})
    assert response.status_code == 400
    assert "does not match" in response.json()["message"]
