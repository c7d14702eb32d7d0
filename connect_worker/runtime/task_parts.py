"""What every task runner is built from, besides its plugin task and its clients.

The :class:`~connect_worker.runtime.task_factory.TaskFactory` makes one
:class:`TaskParts` per task attempt from the connector's validated config
(the herder's :class:`~connect_worker.connector_config.CommonConnectorConfig`)
and the worker's settings; the source and sink runners take it whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from connect_worker.runtime.backoff import ExponentialBackoff
from connect_worker.runtime.conversion import RecordConverters
from connect_worker.runtime.error_handling import ErrorHandler
from connect_worker.runtime.transform_chain import TransformChain

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import TaskMetrics


def _ignore_topic(topic: str) -> None:
    """The default ``on_topic``: nobody records the topics a task uses."""


@dataclass(frozen=True, slots=True)
class TaskParts:
    """The shared parts of one task attempt.

    ``bootstrap_servers`` is the worker's Kafka cluster (its embedded broker's
    listener or the worker's ``bootstrap.servers``); the runner tells the plugin
    task through its context, so a plugin that reads the log itself (SparkSink)
    reads the same cluster as the worker. ``on_topic`` is told every topic the
    task reads or writes; ``stopping`` is set when the task is asked to stop.
    ``metrics`` is where the runner records what it measures (None:
    ``metrics.enabled=false``, nothing is measured).
    """

    chain: TransformChain
    converters: RecordConverters
    errors: ErrorHandler
    retry_backoff: ExponentialBackoff
    bootstrap_servers: str
    on_topic: Callable[[str], None] = _ignore_topic
    stopping: threading.Event = field(default_factory=threading.Event)
    metrics: TaskMetrics | None = None
