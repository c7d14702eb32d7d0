"""The broker's running counters (``log_engine.broker.metrics.recorder``) and the
``metrics.listeners`` key."""

from __future__ import annotations

import pytest

from log_engine.broker.config import BrokerConfig, BrokerConfigError
from log_engine.broker.metrics import BrokerMetrics
from log_engine.broker.metrics.recorder import REQUEST_NAMES, RESERVOIR_SIZE, RequestStats
from log_engine.file_slice import FileSlice
from log_engine.protocol import ApiKey


def test_request_names_are_kafkas() -> None:
    assert REQUEST_NAMES[ApiKey.PRODUCE] == "Produce"
    assert REQUEST_NAMES[ApiKey.OFFSET_FOR_LEADER_EPOCH] == "OffsetForLeaderEpoch"
    assert REQUEST_NAMES[ApiKey.INIT_PRODUCER_ID] == "InitProducerId"
    assert REQUEST_NAMES[ApiKey.API_VERSIONS] == "ApiVersions"


def test_a_fetch_counts_as_fetch_and_as_consumer_or_follower() -> None:
    metrics = BrokerMetrics()
    metrics.request_done(ApiKey.FETCH, 11, {"replica_id": -1}, 0.002)
    metrics.request_done(ApiKey.FETCH, 11, {"replica_id": 2}, 0.004)
    assert metrics.requests["Fetch"].by_version == {11: 2}
    assert metrics.requests["FetchConsumer"].count == 1
    assert metrics.requests["FetchFollower"].count == 1
    assert metrics.requests["Fetch"].time_ms_sum == pytest.approx(6.0)


def test_bytes_out_go_to_the_topic_for_consumers_and_to_replication_for_followers() -> None:
    metrics = BrokerMetrics()
    answer = [
        {
            "topic": "t",
            "partitions": [
                {"error_code": 0, "records": [FileSlice(0, 0, 100), FileSlice(0, 0, 20)]},
                {"error_code": 1, "records": None},
            ],
        }
    ]
    metrics.fetch_answered(answer, from_follower=False)
    metrics.fetch_answered(answer, from_follower=True)
    stats = metrics.topics["t"]
    assert (stats.bytes_out, stats.fetch_requests, stats.failed_fetch_requests) == (120, 4, 2)
    assert metrics.replication_bytes_out == 120


def test_quantiles_come_from_the_latest_requests() -> None:
    stats = RequestStats()
    for ms in range(1, 101):
        stats.record(1, float(ms))
    assert stats.quantile(0.5) == 50
    assert stats.quantile(0.99) == 99
    for _ in range(RESERVOIR_SIZE):
        stats.record(1, 7.0)
    assert stats.quantile(0.999) == 7.0
    assert stats.count == 100 + RESERVOIR_SIZE
    assert RequestStats().quantile(0.99) == 0.0


def test_isr_changes_count_shrinks_and_expands() -> None:
    metrics = BrokerMetrics()
    metrics.isr_changed(3, 2)
    metrics.isr_changed(2, 3)
    metrics.isr_changed(3, 3)
    assert (metrics.isr_shrinks, metrics.isr_expands) == (1, 1)


@pytest.mark.parametrize(
    ("value", "address"),
    [
        ("http://127.0.0.1:9404", ("127.0.0.1", 9404)),
        ("http://[::1]:0", ("::1", 0)),
        ("HTTP://:9404", ("", 9404)),
    ],
)
def test_metrics_listeners_takes_one_http_address(value: str, address: tuple[str, int]) -> None:
    assert BrokerConfig.from_properties({"metrics.listeners": value}).metrics_address == address


def test_metrics_are_off_without_the_key() -> None:
    assert BrokerConfig.from_properties({}).metrics_address is None


@pytest.mark.parametrize(
    "value", ["127.0.0.1:9404", "https://h:1", "http://h:port", "http://h:70000", "http://h"]
)
def test_a_bad_metrics_listener_is_a_config_error(value: str) -> None:
    with pytest.raises(BrokerConfigError, match=r"metrics\.listeners"):
        BrokerConfig.from_properties({"metrics.listeners": value})
