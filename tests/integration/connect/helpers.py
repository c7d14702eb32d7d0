"""Helpers for the runtime's integration tests."""

from __future__ import annotations

from typing import Any

from connect_worker.converters import SimpleHeaderConverter, StringConverter
from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.runtime.backoff import ExponentialBackoff
from connect_worker.runtime.conversion import RecordConverters
from connect_worker.runtime.error_handling import ErrorHandler, ErrorSettings
from connect_worker.runtime.source_runner import SourceRunnerSettings, SourceTaskRunner
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.task_parts import TaskParts
from connect_worker.runtime.topics import TopicCreator
from connect_worker.runtime.transform_chain import TransformChain
from connect_worker.states import State
from connect_worker.storage.offsets import MemoryOffsetStore
from connectors.api import SourceTask
from harness.broker_process import BrokerProcess
from log_engine.client import SyncProducer
from log_engine.client.sync_admin import SyncAdmin


def task_state(herder: StandaloneHerder, name: str, task: int = 0) -> State | None:
    tasks = herder.connector_status(name).tasks
    return tasks[task].state if len(tasks) > task else None


def source_runner(
    broker: BrokerProcess,
    task: SourceTask,
    topic: str,
    task_id: TaskId,
    settings: SourceRunnerSettings,
    *,
    converter: Any = None,
    errors: ErrorHandler | None = None,
    offsets: MemoryOffsetStore | None = None,
    producer_config: dict[str, Any] | None = None,
) -> SourceTaskRunner:
    """A runner of ``task`` writing to ``topic`` on ``broker``, without transforms.

    Keys and values go through ``converter`` (default: a StringConverter), errors
    through ``errors`` (default: none tolerated), offsets into ``offsets``.
    """
    if converter is None:
        converter = StringConverter()
        converter.configure({}, False)
    header = SimpleHeaderConverter()
    header.configure({})
    bootstrap = {"bootstrap.servers": broker.bootstrap}
    return SourceTaskRunner(
        task_id,
        task,
        {"topic": topic},
        TaskParts(
            chain=TransformChain([], []),
            converters=RecordConverters(converter, converter, header),
            errors=errors or ErrorHandler(task_id, ErrorSettings()),
            retry_backoff=ExponentialBackoff(50, 400),
            bootstrap_servers=broker.bootstrap,
        ),
        producer_factory=lambda: SyncProducer({**bootstrap, **(producer_config or {})}),
        offsets=MemoryOffsetStore() if offsets is None else offsets,
        topics=TopicCreator(lambda: SyncAdmin(bootstrap)),
        settings=settings,
    )
