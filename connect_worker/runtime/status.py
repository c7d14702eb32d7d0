"""The runtime's vocabulary for identifying tasks and reporting their states."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from connect_worker.states import State


@dataclass(frozen=True, slots=True, order=True)
class TaskId:
    """Task ``task`` of connector ``connector`` (Kafka's ``ConnectorTaskId``)."""

    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


class StatusListener(Protocol):
    """Where the worker reports state changes (the herder records them).

    Called from connector and task threads; implementations must be
    thread-safe and must not block (no joins, no waiting on the herder).
    """

    def on_connector_state(self, name: str, state: State, trace: str | None) -> None: ...

    def on_task_state(self, task: TaskId, state: State, trace: str | None) -> None: ...

    def on_topic_used(self, connector: str, topic: str) -> None:
        """A task produced to or consumed from ``topic`` for the first time."""
        ...
