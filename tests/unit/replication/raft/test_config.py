"""RaftConfig: Kafka's keys as aliases, and clear errors for impossible settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from log_engine.replication.raft import RaftConfig


def test_kafka_keys_set_the_timeouts() -> None:
    config = RaftConfig.model_validate(
        {
            "node.id": 2,
            "voter_ids": [1, 2, 3],
            "controller.quorum.election.timeout.ms": 500,
            "controller.quorum.fetch.timeout.ms": 900,
        }
    )
    assert (config.node_id, config.election_timeout_ms, config.fetch_timeout_ms) == (2, 500, 900)
    assert config.is_voter and config.majority == 2
    assert not RaftConfig(node_id=9, voter_ids=frozenset({1, 2, 3})).is_voter


def test_a_request_timeout_within_the_fetch_wait_is_refused() -> None:
    with pytest.raises(ValidationError, match="request_timeout_ms"):
        RaftConfig(
            node_id=1, voter_ids=frozenset({1}), request_timeout_ms=100, fetch_max_wait_ms=100
        )


@pytest.mark.parametrize(
    "settings",
    [
        {"node_id": 1, "voter_ids": frozenset()},
        {"node_id": -1, "voter_ids": frozenset({1})},
        {"node_id": 1, "voter_ids": frozenset({1}), "election_timeout_ms": 0},
        {"node_id": 1, "voter_ids": frozenset({1}), "controller.quorum.bogus": 1},
    ],
    ids=["no-voters", "negative-id", "zero-timeout", "unknown-key"],
)
def test_impossible_settings_are_refused(settings: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RaftConfig.model_validate(settings)
