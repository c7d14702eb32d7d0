"""A rejected config never echoes its values: pydantic's whole-model errors print
a shortened copy of the input, whose head or tail can be a password."""

from __future__ import annotations

import pydantic
import pytest

from connect_worker.worker_config import WorkerConfig
from log_engine.broker.config import BrokerConfig
from log_engine.client.config import ConsumerConfig

SECRET = "s3cret-Passw0rd-xyz"


def test_a_client_config_error_does_not_echo_the_input() -> None:
    props = {
        "sasl.password": SECRET,
        "bootstrap.servers": "localhost:9092",
        "group.id": "g",
        "heartbeat.interval.ms": "100000",
        "session.timeout.ms": "10000",
        "ssl.key.password": SECRET,
    }
    with pytest.raises(pydantic.ValidationError) as caught:
        ConsumerConfig.from_mapping(props)
    assert "heartbeat.interval.ms must be lower than session.timeout.ms" in str(caught.value)
    assert SECRET[:6] not in str(caught.value)


@pytest.mark.parametrize("model", [BrokerConfig, WorkerConfig])
def test_broker_and_worker_config_errors_do_not_echo_the_input(model: type) -> None:
    assert model.model_config.get("hide_input_in_errors") is True
