"""Keys nothing reads: listed for the user, never an error."""

from __future__ import annotations

from connect_worker.plugins import PluginRegistry
from connect_worker.unused_keys import unused_keys

REGISTRY = PluginRegistry.load(entry_points=False)


def test_keys_of_the_runtime_and_the_connector_are_read() -> None:
    jdbc = REGISTRY.connector_class("io.confluent.connect.jdbc.JdbcSourceConnector")
    props = {
        "name": "j", "connector.class": "JdbcSource", "tasks.max": "2",
        "connection.url": "sqlite:///x.db", "mode": "bulk", "numeric.mapping": "best_fit",
        "transforms": "route", "transforms.route.type": "RegexRouter",
        "value.converter": "JsonConverter", "value.converter.schemas.enable": "true",
        "errors.tolerance": "all", "producer.override.linger.ms": "5",
        "topic.creation.default.partitions": "3",
    }
    assert unused_keys(jdbc, props) == []


def test_an_unimplemented_option_and_a_typo_are_listed_sorted() -> None:
    jdbc = REGISTRY.connector_class("JdbcSink")
    props = {"connector.class": "JdbcSink", "topics": "t", "connection.url": "sqlite:///x.db",
             "db.timezone": "UTC", "auto.creat": "true"}
    assert unused_keys(jdbc, props) == ["auto.creat", "db.timezone"]


def test_a_connectors_own_prefixes_are_read() -> None:
    spark = REGISTRY.connector_class("SparkSink")
    props = {"connector.class": "SparkSink", "topics": "t", "spark.conf.spark.sql.shuffle."
             "partitions": "4", "spark.confx": "1"}
    assert unused_keys(spark, props) == ["spark.confx"]
