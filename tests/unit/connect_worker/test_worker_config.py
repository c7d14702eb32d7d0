"""WorkerConfig: Kafka's keys, our defaults, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.properties import load_properties
from connect_worker.worker_config import WorkerConfig
from connectors.api import ConfigError

REPO = Path(__file__).resolve().parents[3]


def test_defaults() -> None:
    config = WorkerConfig.from_properties({})
    assert config.bootstrap_servers is None and config.standalone_embedded
    assert config.rest_listener == ("http", "127.0.0.1", 8083)
    assert config.key_converter == "org.apache.kafka.connect.json.JsonConverter"
    assert config.value_converter == "org.apache.kafka.connect.json.JsonConverter"
    assert config.header_converter == "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    assert config.offset_storage_file_filename == Path("data/connect.offsets")
    assert (config.offset_flush_interval_ms, config.offset_flush_timeout_ms) == (10000, 5000)
    assert config.pipelines_dir == Path("configs/pipelines")
    assert config.embedded_broker_listeners == "PLAINTEXT://127.0.0.1:9092"
    assert config.embedded_broker_log_dirs == Path("data/log")
    assert config.connector_configs_file == Path("data/connectors.json")
    assert config.task_restart_enabled
    assert (config.task_restart_backoff_initial_ms, config.task_restart_backoff_max_ms) == (
        1000,
        60000,
    )
    assert config.plugin_path == [] and config.config_providers is None


def test_kafka_names_and_converter_props() -> None:
    config = WorkerConfig.from_properties(
        {
            "bootstrap.servers": "a:9092,b:9092",
            "listeners": "http://0.0.0.0:18083",
            "key.converter": "StringConverter",
            "value.converter.schemas.enable": "false",
            "value.converter.schemas.cache.size": "10",
            "key.converter.converter.encoding": "latin-1",
            "plugin.path": "/opt/a, /opt/b",
            "config.providers": "file",
            "offset.flush.interval.ms": "500",
            "task.restart.enabled": "false",
        }
    )
    assert config.bootstrap_servers == "a:9092,b:9092" and not config.standalone_embedded
    assert config.rest_listener == ("http", "0.0.0.0", 18083)
    assert config.converter_props("value.converter") == {
        "schemas.enable": "false",
        "schemas.cache.size": "10",
    }
    assert config.converter_props("key.converter.") == {"converter.encoding": "latin-1"}
    assert config.converter_props("header.converter") == {}
    assert config.plugin_paths == [Path("/opt/a"), Path("/opt/b")]
    assert config.config_providers == ["file"]
    assert config.offset_flush_interval_ms == 500 and not config.task_restart_enabled


def test_errors_name_every_bad_key() -> None:
    with pytest.raises(ConfigError) as info:
        WorkerConfig.from_properties(
            {
                "offset.flush.interval.ms": "soon",
                "listeners": "localhost:8083",
                "task.restart.enabled": "maybe",
            }
        )
    message = str(info.value)
    for key in ("offset.flush.interval.ms", "listeners", "task.restart.enabled"):
        assert key in message
    with pytest.raises(ConfigError, match=r"task\.restart\.backoff\.max\.ms: must be at least"):
        WorkerConfig.from_properties({"task.restart.backoff.max.ms": "10"})


def test_blank_bootstrap_servers_means_embedded() -> None:
    assert WorkerConfig.from_properties({"bootstrap.servers": "  "}).standalone_embedded


def test_shipped_worker_properties_parse() -> None:
    for path in sorted((REPO / "configs").glob("*worker*.properties")):
        WorkerConfig.from_properties(load_properties(path))


def test_every_field_has_a_description_and_alias() -> None:
    for name, info in WorkerConfig.model_fields.items():
        assert info.description, name
        assert info.alias, name
