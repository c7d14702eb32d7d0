"""IncrementalAlterConfigs (44) on a single broker: confluent-kafka's
``incremental_alter_configs`` changes a topic's overrides, which DescribeConfigs
shows and the topic's log enforces; bad keys and values are refused clearly."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from harness.broker_process import BrokerProcess

SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE


def _alter(admin: AdminClient, topic: str, *entries: ConfigEntry) -> None:
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=list(entries))
    (future,) = admin.incremental_alter_configs([resource], request_timeout=30).values()
    future.result(60)


def _described(admin: AdminClient, topic: str, key: str) -> tuple[str, bool]:
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    entry = future.result(60)[key]
    return entry.value, entry.is_default


def _produce_error(bootstrap: str, topic: str, size: int) -> int | None:
    errors: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "retries": 0})
    producer.produce(topic, b"x" * size, on_delivery=lambda e, _m: errors.append(e))
    producer.flush(30)
    assert len(errors) == 1
    return None if errors[0] is None else errors[0].code()


def test_set_and_delete_a_topic_config(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("altered", 1, 1)])["altered"].result(60)
    _alter(admin, "altered", ConfigEntry("max.message.bytes", "2000", incremental_operation=SET))
    assert _described(admin, "altered", "max.message.bytes") == ("2000", False)
    assert _produce_error(broker.bootstrap, "altered", 5000) == KafkaError.MSG_SIZE_TOO_LARGE
    _alter(admin, "altered", ConfigEntry("max.message.bytes", None, incremental_operation=DELETE))
    assert _described(admin, "altered", "max.message.bytes")[1] is True
    assert _produce_error(broker.bootstrap, "altered", 5000) is None

    for topic, entry, code in [
        ("altered", ConfigEntry("no.such.key", "1", incremental_operation=SET),
         KafkaError.INVALID_CONFIG),
        ("missing-topic", ConfigEntry("retention.ms", "1", incremental_operation=SET),
         KafkaError.UNKNOWN_TOPIC_OR_PART),
    ]:  # fmt: skip
        with pytest.raises(KafkaException) as refused:
            _alter(admin, topic, entry)
        assert refused.value.args[0].code() == code, refused.value.args[0]
