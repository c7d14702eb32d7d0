"""The worker: starts and stops connector objects and task threads, nothing more.

The herder (the control plane) decides *what* runs; the worker makes it so
and reports states back through a :class:`StatusListener`. Its parts, one job
each:

- :class:`~.connector_instance.ConnectorInstance`: one connector plugin's lifecycle;
- :class:`~.task_thread.TaskThread`: one task's thread, pause/resume and
  automatic restarts with backoff;
- :class:`~.task_factory.TaskFactory`: the plugin task, its runner and clients
  for each attempt;
- :class:`~.source_runner.SourceTaskRunner` / :class:`~.sink_runner.SinkTaskRunner`:
  the data loops.

Lifecycle: construct -> ``start_connector``/``start_task``/``stop_tasks``/... as
the herder orders -> :meth:`Worker.stop` (stops every task, then every
connector). Mutating calls come from one thread (the herder's); queries may
come from any thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from connect_worker.connector_config import CommonConnectorConfig
from connect_worker.metrics.task_metrics import WorkerMetrics
from connect_worker.runtime.connector_instance import ConnectorInstance
from connect_worker.runtime.settings import RuntimeSettings
from connect_worker.runtime.status import StatusListener, TaskId
from connect_worker.runtime.task_factory import ReporterFactory, TaskFactory
from connect_worker.runtime.task_thread import TaskThread
from connect_worker.runtime.topics import TopicCreator
from connect_worker.states import ConnectorType, State
from connect_worker.storage.offsets import OffsetStore
from connect_worker.unused_keys import unused_keys
from log_engine.client import SyncAdmin

if TYPE_CHECKING:
    from connect_worker.plugins import PluginRegistry

log = logging.getLogger(__name__)


class Worker:
    """Runs connectors and tasks for one herder (see the module doc)."""

    def __init__(
        self,
        worker_id: str,
        registry: PluginRegistry,
        settings: RuntimeSettings,
        offsets: OffsetStore,
        listener: StatusListener,
        *,
        reporters: ReporterFactory | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.settings = settings
        self.offsets = offsets
        self._registry = registry
        self._listener = listener
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorInstance] = {}
        self._tasks: dict[TaskId, TaskThread] = {}
        self.topics = TopicCreator(
            lambda: SyncAdmin({"bootstrap.servers": settings.bootstrap, **settings.admin_props})
        )
        self._factory = TaskFactory(registry, settings, offsets, self.topics, listener, reporters)
        #: What the runners measure (``metrics.enabled``); None: nothing is measured.
        self.metrics = WorkerMetrics(settings.metrics_window) if settings.metrics_enabled else None

    # -- connectors ----------------------------------------------------------------------

    def start_connector(
        self,
        name: str,
        props: Mapping[str, str],
        *,
        paused: bool = False,
        on_reconfigure: Callable[[str], None],
    ) -> bool:
        """Start connector ``name`` (stopping a previous instance); False if it FAILED."""
        self.stop_connector(name)
        cls = self._registry.connector_class(props["connector.class"])
        unused = unused_keys(cls, props)
        if unused:
            log.warning(
                "connector %s: keys nothing reads, ignored (as Kafka Connect ignores unknown "
                "keys): %s", name, ", ".join(unused),
            )
        instance = ConnectorInstance(
            name, cls, props, self._listener, on_reconfigure, self.settings.bootstrap
        )
        with self._lock:
            self._connectors[name] = instance
        started = instance.start(paused=paused)
        if self.metrics is not None:
            self.metrics.connector_started(started)
        return started

    def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        """Task configs from the running connector, each merged over its props."""
        instance = self._connector(name)
        return [{**instance.props, **config} for config in instance.task_configs(max_tasks)]

    def set_connector_paused(self, name: str, paused: bool) -> None:
        with self._lock:
            instance = self._connectors.get(name)
        if instance is not None:
            instance.set_paused(paused)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            instance = self._connectors.pop(name, None)
        if instance is not None:
            instance.stop()

    def is_connector_running(self, name: str) -> bool:
        with self._lock:
            instance = self._connectors.get(name)
        return instance is not None and instance.started

    def connector_type(self, name: str) -> ConnectorType | None:
        with self._lock:
            instance = self._connectors.get(name)
        return instance.type if instance is not None else None

    # -- tasks ---------------------------------------------------------------------------

    def start_task(
        self,
        task_id: TaskId,
        connector: CommonConnectorConfig,
        connector_props: Mapping[str, str],
        task_props: Mapping[str, str],
        *,
        paused: bool = False,
    ) -> None:
        """Start ``task_id`` in a thread of its own; its states go to the listener.

        ``connector`` is the connector's validated config (kept by the herder),
        ``connector_props`` its properties with references resolved.
        """
        connector_props, task_props = dict(connector_props), dict(task_props)
        listener = _CurrentThreadOnly(self, self._listener)
        metrics = self.metrics.task(task_id) if self.metrics is not None else None
        thread = TaskThread(
            task_id,
            lambda: self._factory.runner(
                task_id, connector, connector_props, task_props, metrics
            ),
            listener,
            self.settings.restart,
            paused=paused,
            metrics=metrics,
        )
        listener.thread = thread
        with self._lock:
            if task_id in self._tasks:
                raise RuntimeError(f"task {task_id} is already running on this worker")
            self._tasks[task_id] = thread
        thread.start()

    def stop_tasks(self, task_ids: Iterable[TaskId]) -> list[TaskId]:
        """Stop tasks and wait for them (all in parallel); returns those that did not end."""
        with self._lock:
            threads = [self._tasks.pop(t) for t in list(task_ids) if t in self._tasks]
        for thread in threads:
            thread.request_stop()
            if self.metrics is not None:
                self.metrics.task_stopped(thread.task_id, thread.metrics)
        timeout_s = self.settings.task_shutdown_timeout_ms / 1000
        stuck = [t.task_id for t in threads if not t.join(timeout_s)]
        for task_id in stuck:
            log.error(
                "task %s did not stop within %.1fs; abandoning its thread", task_id, timeout_s
            )
        return stuck

    def set_tasks_paused(self, task_ids: Iterable[TaskId], paused: bool) -> None:
        for thread in self._threads(task_ids):
            if paused:
                thread.pause()
            else:
                thread.resume()

    def task_ids(self, connector: str | None = None) -> list[TaskId]:
        with self._lock:
            return sorted(t for t in self._tasks if connector is None or t.connector == connector)

    def connector_details(self, name: str) -> dict[str, Any]:
        """What connector ``name``'s plugin reports of its progress (``{}`` if not here)."""
        with self._lock:
            instance = self._connectors.get(name)
        return instance.details() if instance is not None else {}

    def task_details(self, task_id: TaskId) -> dict[str, Any]:
        """What task ``task_id``'s plugin reports of its progress (``{}`` if not here)."""
        with self._lock:
            thread = self._tasks.get(task_id)
        return thread.details() if thread is not None else {}

    def task_state(self, task_id: TaskId) -> State | None:
        with self._lock:
            thread = self._tasks.get(task_id)
        return thread.state if thread is not None else None

    # -- shutdown ------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop every task (flushing offsets), then every connector, then the admin client."""
        self.stop_tasks(self.task_ids())
        with self._lock:
            names = list(self._connectors)
        for name in names:
            self.stop_connector(name)
        self.topics.close()

    def _connector(self, name: str) -> ConnectorInstance:
        with self._lock:
            instance = self._connectors.get(name)
        if instance is None or not instance.started:
            raise RuntimeError(f"connector {name} is not running on this worker")
        return instance

    def _is_current(self, thread: TaskThread | None) -> bool:
        if thread is None:
            return False
        with self._lock:
            return self._tasks.get(thread.task_id) is thread

    def _threads(self, task_ids: Iterable[TaskId]) -> list[TaskThread]:
        with self._lock:
            return [self._tasks[t] for t in task_ids if t in self._tasks]


class _CurrentThreadOnly:
    """Passes on a task thread's reports only while it is the worker's thread for that id.

    A thread being stopped (or abandoned after the shutdown timeout) must not
    overwrite the status of the task that replaced it.
    """

    def __init__(self, worker: Worker, listener: StatusListener) -> None:
        self._worker = worker
        self._listener = listener
        self.thread: TaskThread | None = None

    def on_connector_state(self, name: str, state: State, trace: str | None) -> None:
        self._listener.on_connector_state(name, state, trace)

    def on_task_state(self, task: TaskId, state: State, trace: str | None) -> None:
        if self._worker._is_current(self.thread):
            self._listener.on_task_state(task, state, trace)

    def on_topic_used(self, connector: str, topic: str) -> None:
        self._listener.on_topic_used(connector, topic)
