"""Client configs: Kafka names, string values from properties files, cross-field rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from log_engine.client.config import AdminConfig, ConsumerConfig, ProducerConfig


def test_properties_strings_are_parsed() -> None:
    config = ProducerConfig.from_mapping(
        {
            "bootstrap.servers": "a:9092, b:9093",
            "acks": "all",
            "linger.ms": "20",
            "compression.type": "zstd",
            "enable.idempotence": "true",
        }
    )
    assert config.bootstrap_servers == ("a:9092", "b:9093")
    assert config.addresses() == [("a", 9092), ("b", 9093)]
    assert config.acks == -1
    assert config.linger_ms == 20
    assert config.idempotent


def test_python_names_work_too() -> None:
    config = ProducerConfig(bootstrap_servers="h:1", linger_ms=0, acks=1)
    assert (config.linger_ms, config.acks) == (0, 1)


@pytest.mark.parametrize(
    ("acks", "expected"), [("0", 0), ("1", 1), ("-1", -1), ("all", -1), ("ALL", -1), (1, 1)]
)
def test_acks_values(acks: object, expected: int) -> None:
    assert ProducerConfig.from_mapping({"bootstrap.servers": "h:1", "acks": acks}).acks == expected


def test_idempotence_defaults_on_only_when_compatible() -> None:
    assert ProducerConfig(bootstrap_servers="h:1").idempotent
    assert not ProducerConfig(bootstrap_servers="h:1", acks=1).idempotent
    with pytest.raises(ValidationError, match=r"enable\.idempotence"):
        ProducerConfig.from_mapping(
            {"bootstrap.servers": "h:1", "acks": "1", "enable.idempotence": "true"}
        )


def test_unknown_keys_and_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError):
        ProducerConfig.from_mapping({"bootstrap.servers": "h:1", "linger.msec": "5"})
    with pytest.raises(ValidationError):
        ProducerConfig.from_mapping({"bootstrap.servers": "h:1", "batch.size": "-1"})
    with pytest.raises(ValidationError):
        ProducerConfig.from_mapping({"bootstrap.servers": "no-port"})
    with pytest.raises(ValidationError):
        ProducerConfig.from_mapping({"bootstrap.servers": "h:1", "security.protocol": "TLS"})
    with pytest.raises(ValidationError, match=r"needs sasl\.username"):
        ProducerConfig.from_mapping(
            {"bootstrap.servers": "h:1", "security.protocol": "SASL_SSL"}
        )


def test_delivery_timeout_must_cover_linger_and_request_timeout() -> None:
    with pytest.raises(ValidationError, match=r"delivery\.timeout\.ms"):
        ProducerConfig.from_mapping(
            {
                "bootstrap.servers": "h:1",
                "delivery.timeout.ms": "1000",
                "request.timeout.ms": "5000",
            }
        )


def test_consumer_settings() -> None:
    config = ConsumerConfig.from_mapping(
        {
            "bootstrap.servers": "h:1",
            "group.id": "g",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "partition.assignment.strategy": (
                "roundrobin,org.apache.kafka.clients.consumer.RangeAssignor"
            ),
            "isolation.level": "read_committed",
        }
    )
    assert config.partition_assignment_strategy == ("roundrobin", "range")
    assert config.read_committed
    assert not config.enable_auto_commit
    with pytest.raises(ValidationError, match=r"heartbeat\.interval\.ms"):
        ConsumerConfig.from_mapping(
            {
                "bootstrap.servers": "h:1",
                "session.timeout.ms": "3000",
                "heartbeat.interval.ms": "3000",
            }
        )


@pytest.mark.parametrize("model", [ProducerConfig, ConsumerConfig, AdminConfig])
def test_every_field_has_a_description_and_a_kafka_alias(model: type) -> None:
    for name, field in model.model_fields.items():
        assert field.description, f"{model.__name__}.{name} has no description"
        assert field.alias is None or "." in field.alias or field.alias == name
        if "_" in name:
            assert field.alias is not None, f"{model.__name__}.{name} has no Kafka-style alias"
