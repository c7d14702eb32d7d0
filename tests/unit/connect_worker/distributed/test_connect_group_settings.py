"""GroupSettings: Kafka Connect's keys and defaults, and clear errors for bad values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from connect_worker.distributed.membership import GroupSettings
from connect_worker.distributed.protocol import ConnectProtocol

BASE = {"bootstrap.servers": "b:9092", "group.id": "connect-cluster"}


def test_kafka_defaults_and_other_worker_keys_ignored() -> None:
    settings = GroupSettings.from_mapping({**BASE, "config.storage.topic": "connect-configs"})
    assert settings.session_timeout_ms == 10000
    assert settings.heartbeat_interval_ms == 3000
    assert settings.rebalance_timeout_ms == 60000
    assert settings.scheduled_rebalance_max_delay_ms == 300000
    assert settings.connect_protocol is ConnectProtocol.SESSIONED


def test_connect_protocol_names() -> None:
    named = [("compatible", ConnectProtocol.COMPATIBLE), ("eager", ConnectProtocol.EAGER)]
    for value, expected in named:
        settings = GroupSettings.from_mapping({**BASE, "connect.protocol": value})
        assert settings.connect_protocol is expected


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"connect.protocol": "cooperative"}, "is not one of default, compatible, sessioned"),
        ({"heartbeat.interval.ms": "10000"}, "must be lower than session.timeout.ms"),
        ({"group.id": ""}, "group.id"),
        ({"scheduled.rebalance.max.delay.ms": "-1"}, "scheduled.rebalance.max.delay.ms"),
    ],
)
def test_bad_values_are_named(extra: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        GroupSettings.from_mapping({**BASE, **extra})
