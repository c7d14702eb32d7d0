"""SparkSink's config model: cross-field rules, secrets, pass-through keys; no pyspark needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from connectors.api import ConfigError
from spark_sinks.sink_config import SparkSinkConfig
from spark_sinks.sink_connector import SparkSinkConnector

BASE = {"topics": "t", "checkpoint.location": "/tmp/cp", "output.path": "/tmp/out"}


def test_defaults() -> None:
    config = SparkSinkConfig.from_props(BASE)
    assert config.master == "local[*]"
    assert config.output_format == "parquet" and config.value_format == "json"
    assert config.starting_offsets == "earliest" and not config.trigger_available_now


def test_the_query_reads_the_workers_cluster_unless_told_otherwise() -> None:
    config = SparkSinkConfig.from_props(BASE)
    assert config.bootstrap_servers == ""  # no fixed address such as 127.0.0.1:9092
    assert config.reading("127.0.0.1:40123").bootstrap_servers == "127.0.0.1:40123"
    other = SparkSinkConfig.from_props({**BASE, "spark.bootstrap.servers": "elsewhere:9092"})
    assert other.reading("127.0.0.1:40123").bootstrap_servers == "elsewhere:9092"
    with pytest.raises(ConfigError, match=r"spark\.bootstrap\.servers"):
        config.reading("")


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({**BASE, "output.format": "avro"}, "output.format"),
        ({**BASE, "value.format": "xml"}, "value.format"),
        ({k: v for k, v in BASE.items() if k != "checkpoint.location"}, "checkpoint.location"),
        ({k: v for k, v in BASE.items() if k != "output.path"}, "output.path"),
        ({**BASE, "topics": ""}, "topics"),
        ({**BASE, "topics.regex": "t.*"}, "topics"),
        ({**BASE, "output.format": "jdbc"}, "output.jdbc.url"),
        (
            {
                **BASE,
                "output.format": "jdbc",
                "output.jdbc.url": "pg://x",
                "output.jdbc.table": "t",
            },
            "not a JDBC URL",
        ),
        ({**BASE, "max.offsets.per.trigger": "0"}, "max.offsets.per.trigger"),
    ],
)
def test_bad_configs_name_the_key(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SparkSinkConfig.from_props(props)


def test_jdbc_password_is_a_secret_and_spark_conf_passes_through() -> None:
    props = {
        **BASE,
        "output.format": "jdbc",
        "output.jdbc.url": "jdbc:postgresql://h/db",
        "output.jdbc.table": "t",
        "output.jdbc.password": "hunter2",
        "spark.conf.spark.executor.memory": "2g",
    }
    config = SparkSinkConfig.from_props(props)
    assert "hunter2" not in repr(config)
    assert config.jdbc_password.get_secret_value() == "hunter2"
    assert SparkSinkConfig.spark_conf(props) == {"spark.executor.memory": "2g"}


def test_one_task_whatever_tasks_max() -> None:
    connector = SparkSinkConnector()
    connector.start(BASE)
    assert len(connector.task_configs(8)) == 1  # one query, one checkpoint
    assert "SparkSink" in connector.aliases and "SparkSinkConnector" in connector.aliases


def test_plugin_and_connector_modules_do_not_import_pyspark() -> None:
    code = (
        "import sys, spark_sinks.plugin, spark_sinks.sink_connector, spark_sinks.sink_config\n"
        "from spark_sinks.sink_connector import SparkSinkConnector\n"
        "SparkSinkConnector().start({'topics': 't', 'checkpoint.location': '/c',"
        " 'output.path': '/o'})\n"
        "assert 'pyspark' not in sys.modules, 'pyspark imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
