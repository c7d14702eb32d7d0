"""Herder dataclasses as Kafka Connect's JSON."""

from __future__ import annotations

from connect_worker.herder.api import ConnectorInfo, ConnectorStatus, TaskStatus
from connect_worker.rest.models import (
    CreateConnectorRequest,
    connector_info_json,
    connector_status_json,
)
from connect_worker.states import ConnectorType, State


def test_info_lists_tasks_as_ids() -> None:
    info = ConnectorInfo("c", {"name": "c"}, (0, 1), ConnectorType.SINK)
    assert connector_info_json(info) == {
        "name": "c",
        "config": {"name": "c"},
        "tasks": [{"connector": "c", "task": 0}, {"connector": "c", "task": 1}],
        "type": "sink",
    }


def test_status_has_trace_only_when_there_is_one() -> None:
    status = ConnectorStatus(
        "c",
        ConnectorType.SOURCE,
        State.RUNNING,
        "w:8083",
        tasks=(
            TaskStatus(0, State.FAILED, "w:8083", "Traceback..."),
            TaskStatus(1, State.RUNNING, "w:8083"),
        ),
    )
    assert connector_status_json(status) == {
        "name": "c",
        "connector": {"state": "RUNNING", "worker_id": "w:8083"},
        "tasks": [
            {"id": 0, "state": "FAILED", "worker_id": "w:8083", "trace": "Traceback..."},
            {"id": 1, "state": "RUNNING", "worker_id": "w:8083"},
        ],
        "type": "source",
    }


def test_config_values_accept_json_numbers_and_booleans() -> None:
    request = CreateConnectorRequest.model_validate(
        {"name": "c", "config": {"tasks.max": 2, "x": True, "y": 1.5, "z": "s"}}
    )
    assert request.config == {"tasks.max": "2", "x": "true", "y": "1.5", "z": "s"}
