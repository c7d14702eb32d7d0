"""The config topic's records: Kafka Connect's keys and values, both ways."""

from __future__ import annotations

import pytest

from connect_worker.states import TargetState
from connect_worker.storage import config_records as rec


def test_task_keys_keep_dashes_in_connector_names() -> None:
    assert rec.task_key("my-conn-2", 11) == b"task-my-conn-2-11"
    parsed = rec.parse(b"task-my-conn-2-11", b'{"properties":{"a":"b"}}')
    assert parsed == rec.TaskConfigRecord("my-conn-2", 11, {"a": "b"})


@pytest.mark.parametrize(
    ("state", "value"),
    [
        (TargetState.RUNNING, b'{"state":"STARTED","state.v2":"STARTED"}'),
        (TargetState.PAUSED, b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (TargetState.STOPPED, b'{"state":"PAUSED","state.v2":"STOPPED"}'),
    ],
)
def test_target_states_round_trip_in_kip_875_form(state: TargetState, value: bytes) -> None:
    assert rec.target_state_value(state) == value
    assert rec.parse(b"target-state-c", value) == rec.TargetStateRecord("c", state)


def test_target_states_of_older_workers_are_read_from_state() -> None:
    parsed = rec.parse(b"target-state-c", b'{"state":"STARTED"}')
    assert parsed == rec.TargetStateRecord("c", TargetState.RUNNING)


def test_tombstones() -> None:
    assert rec.parse(b"connector-c", None) == rec.ConnectorConfigRecord("c", None)
    assert rec.parse(b"target-state-c", None) == rec.TargetStateRecord("c", None)
    assert rec.parse(b"session-key", None) == rec.SessionKeyRecord(None)


def test_restart_flags_default_to_false_when_malformed() -> None:
    parsed = rec.parse(b"restart-connector-c", b'{"include-tasks":"yes"}')
    assert parsed == rec.RestartRequest("c", include_tasks=False, only_failed=False)


def test_records_kafka_writes_that_we_do_not_use_are_ignored_not_errors() -> None:
    assert rec.parse(b"tasks-fencing-c", b'{"task-count":2}') == rec.IgnoredRecord(
        "tasks-fencing-c"
    )
    assert isinstance(rec.parse(b"logger-cluster-org.x", b'{"level":"DEBUG"}'), rec.IgnoredRecord)


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        (b"connector-c", b'{"properties":', "not JSON"),
        (b"connector-c", b'{"props":{}}', "'properties'"),
        (b"connector-c", b'{"properties":{"a":1}}', "strings"),
        (b"commit-c", b'{"tasks":-1}', "count"),
        (b"commit-c", b'{"tasks":"2"}', "'tasks'"),
        (b"task-c", b'{"properties":{}}', "task-<connector>-<n>"),
        (b"session-key", b'{"key":"%%","algorithm":"x","creation-timestamp":1}', "base64"),
        (b"\xff", b"{}", "UTF-8"),
        (b"nonsense", b"{}", "unknown"),
    ],
)
def test_malformed_records_are_named(key: bytes, value: bytes, says: str) -> None:
    with pytest.raises(rec.BadConfigRecord, match=says):
        rec.parse(key, value)
