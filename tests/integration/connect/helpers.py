"""Helpers for the runtime's integration tests."""

from __future__ import annotations

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State


def task_state(herder: StandaloneHerder, name: str, task: int = 0) -> State | None:
    tasks = herder.connector_status(name).tasks
    return tasks[task].state if len(tasks) > task else None
