"""Builds one attempt of a task: the plugin task and the runner around it.

Called in the task's own thread for every (re)start, so each attempt gets a
fresh plugin object, transform chain, converters and client. Clients are
configured from the worker's settings plus the connector's overrides::

    producer: bootstrap.servers, client.id=connector-producer-<connector>-<task>
              (its dead-letter queue's: connector-dlq-producer-<connector>-<task>),
              acks=all, batch.size=262144, linger.ms=5,
              worker producer.*, connector producer.override.*
    consumer: bootstrap.servers, group.id=connect-<connector>,
              client.id=connector-consumer-<connector>-<task>,
              enable.auto.commit=false, auto.offset.reset=earliest, max.poll.records=2000,
              worker consumer.*, connector consumer.override.*
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from connect_worker.connector_config import CommonConnectorConfig
from connect_worker.runtime.backoff import ExponentialBackoff
from connect_worker.runtime.conversion import RecordConverters
from connect_worker.runtime.dead_letter import DeadLetterQueueReporter, DeadLetterSettings
from connect_worker.runtime.error_handling import ErrorHandler, ErrorReporter, ErrorSettings
from connect_worker.runtime.settings import RuntimeSettings
from connect_worker.runtime.sink_runner import SinkTaskRunner
from connect_worker.runtime.source_runner import SourceTaskRunner
from connect_worker.runtime.status import StatusListener, TaskId
from connect_worker.runtime.task_parts import TaskParts
from connect_worker.runtime.task_runner import TaskRunner
from connect_worker.runtime.topics import TopicCreator
from connect_worker.runtime.transform_chain import TransformChain
from connect_worker.storage.offsets import OffsetStore
from connectors.api import ConfigError, SinkTask, SourceTask
from log_engine.client import SyncConsumer, SyncProducer

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import TaskMetrics
    from connect_worker.plugins import PluginRegistry

#: Extra error reporters per task (the dead-letter queue is added by the factory itself).
ReporterFactory = Callable[[TaskId, Mapping[str, str]], list[ErrorReporter]]


#: Larger batches than the client's defaults: a connector moves many small records, and
#: every new batch costs a wake-up of the client's loop thread (GIL hand-offs).
PRODUCER_DEFAULTS = {"batch.size": "262144", "linger.ms": "5"}
CONSUMER_DEFAULTS = {"max.poll.records": "2000"}


def group_id(connector: str) -> str:
    """The consumer group of a sink connector's tasks (Kafka's convention)."""
    return f"connect-{connector}"


def overrides(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


class TaskFactory:
    """Makes runners for the worker's tasks (see the module doc); thread-safe."""

    def __init__(
        self,
        registry: PluginRegistry,
        settings: RuntimeSettings,
        offsets: OffsetStore,
        topics: TopicCreator,
        listener: StatusListener,
        reporters: ReporterFactory | None = None,
    ) -> None:
        self._registry = registry
        self._settings = settings
        self._offsets = offsets
        self._topics = topics
        self._listener = listener
        self._reporters = reporters

    def runner(
        self,
        task_id: TaskId,
        connector: CommonConnectorConfig,
        connector_props: Mapping[str, str],
        task_props: Mapping[str, str],
        metrics: TaskMetrics | None = None,
    ) -> TaskRunner:
        """A new plugin task with its runner; ConfigError for a config that cannot work.

        ``connector`` is the connector's validated config (the herder's), whose
        ``errors.*`` keys govern the task's error handling and dead-letter queue;
        ``connector_props`` are its properties with references resolved;
        ``metrics`` (kept across the task's attempts) is what the runner records into.
        """
        error_metrics = metrics.errors if metrics is not None else None
        connector_cls = self._registry.connector_class(connector.connector_class)
        task = connector_cls.task_class()()
        stopping = threading.Event()
        converters = RecordConverters.build(
            self._registry, connector_props, self._settings.converters
        )
        reporters = self._reporters(task_id, connector_props) if self._reporters else []
        dead_letters = DeadLetterSettings.from_config(connector)
        if dead_letters is not None:
            reporters.append(
                DeadLetterQueueReporter(
                    dead_letters,
                    producer_factory=lambda: self._producer(task_id, connector_props, "dlq-"),
                    ensure_topic=self._topics.ensure,
                    converters=converters,
                    metrics=error_metrics,
                )
            )
        errors = ErrorHandler(
            task_id,
            ErrorSettings.from_config(connector),
            reporters,
            stopping=stopping,
            metrics=error_metrics,
        )
        chain = TransformChain.from_props(connector_props, self._registry)
        parts = TaskParts(
            chain=chain,
            converters=converters,
            errors=errors,
            retry_backoff=ExponentialBackoff(
                self._settings.retry_backoff_initial_ms, self._settings.retry_backoff_max_ms
            ),
            bootstrap_servers=self._settings.bootstrap,
            on_topic=lambda topic: self._listener.on_topic_used(task_id.connector, topic),
            stopping=stopping,
            metrics=metrics,
        )
        if isinstance(task, SourceTask):
            return SourceTaskRunner(
                task_id,
                task,
                task_props,
                parts,
                producer_factory=lambda: self._producer(task_id, connector_props),
                offsets=self._offsets,
                topics=self._topics,
                settings=self._settings.source,
            )
        if isinstance(task, SinkTask):
            return SinkTaskRunner(
                task_id,
                task,
                task_props,
                parts,
                consumer_factory=lambda: self._consumer(task_id, connector_props),
                list_topics=self._topics.list_topics,
                settings=self._settings.sink,
            )
        chain.close()
        raise ConfigError(
            f"connector.class: {connector_cls.__name__}.task_class() is neither a SourceTask "
            "nor a SinkTask"
        )

    def _producer(
        self, task_id: TaskId, props: Mapping[str, str], role: str = ""
    ) -> SyncProducer:
        config = {
            "bootstrap.servers": self._settings.bootstrap,
            "client.id": f"connector-{role}producer-{task_id}",
            "acks": "all",
            **PRODUCER_DEFAULTS,
            **self._settings.producer_props,
            **overrides(props, "producer.override."),
        }
        return SyncProducer(config)

    def _consumer(self, task_id: TaskId, props: Mapping[str, str]) -> SyncConsumer:
        config = {
            "bootstrap.servers": self._settings.bootstrap,
            "group.id": group_id(task_id.connector),
            "client.id": f"connector-consumer-{task_id}",
            "enable.auto.commit": "false",
            "auto.offset.reset": "earliest",
            **CONSUMER_DEFAULTS,
            **self._settings.consumer_props,
            **overrides(props, "consumer.override."),
        }
        config["enable.auto.commit"] = "false"  # the runner commits, after pre_commit
        return SyncConsumer(config)
