"""Helpers for the runtime's integration tests."""

from __future__ import annotations

import time
from collections.abc import Callable

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State

WAIT_S = 60.0


def wait_for(condition: Callable[[], object], what: str, timeout_s: float = WAIT_S) -> None:
    """Poll ``condition`` until it is truthy; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def task_state(herder: StandaloneHerder, name: str, task: int = 0) -> State | None:
    tasks = herder.connector_status(name).tasks
    return tasks[task].state if len(tasks) > task else None
