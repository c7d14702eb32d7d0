"""The standalone herder: the control plane of a single worker.

It owns connector configs (persisted for REST-created connectors, see
:mod:`connect_worker.storage.configs`), target states and statuses, and tells
the :class:`~connect_worker.runtime.worker.Worker` what to run. REST handlers
and the folder watcher call it (STYLE practice 8).

Threads: every change runs on one control thread, in order
(:class:`~connect_worker.herder.control_thread.ControlThread`); queries read
the herder's state under one lock, which is held only for short updates and
never while tasks are stopped and joined. Task and connector threads report
states through :class:`StatusListener` methods, which only take that lock.

Lifecycle::

    herder = StandaloneHerder(worker_config, registry, bootstrap=servers)  # the worker's cluster
    herder.start()      # load connectors created over REST earlier, start them
    ...                 # REST / watcher calls
    herder.stop()       # stop every task (offsets flushed), every connector

Configs are kept as given (``${provider:path:key}`` references unresolved) and
resolved just before a connector starts; every config handed out has its
secrets masked.

Where a connector comes from matters for persistence: ``put_connector_config``
takes ``source="rest"`` (the default: written to ``connector.configs.file``,
back after a restart) or ``source="file"`` (a pipeline file: the folder is its
source of truth, nothing is written). Failed placeholders are never persisted.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from connect_worker.config_providers import providers_from_worker_config
from connect_worker.connector_config import (
    CommonConnectorConfig,
    connector_name_problem,
    mask_secrets,
)
from connect_worker.herder.api import (
    AlreadyExistsError,
    BadRequestError,
    ConflictError,
    ConnectorInfo,
    ConnectorStatus,
    Herder,
    HerderError,
    NotFoundError,
    TaskStatus,
)
from connect_worker.herder.connector_offsets import ConnectorOffsets
from connect_worker.herder.control_thread import ControlThread, ControlThreadStopped
from connect_worker.herder.launcher import ConnectorLauncher, ConnectorRecord
from connect_worker.runtime.connector_instance import connector_type
from connect_worker.runtime.settings import RuntimeSettings
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.worker import Worker
from connect_worker.states import ConnectorType, State, TargetState
from connect_worker.storage.configs import (
    ConfigSource,
    ConfigStore,
    FileConfigStore,
    StoredConnector,
)
from connect_worker.storage.offsets import FileOffsetStore, OffsetStore
from connect_worker.storage.status import FileStatusStore, StateRecord, StatusStore
from connect_worker.validation import validate_connector_config
from connect_worker.worker_config import WorkerConfig

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import WorkerMetrics
    from connect_worker.plugins import PluginRegistry

log = logging.getLogger(__name__)
T = TypeVar("T")


class ShuttingDownError(HerderError):
    """The herder is stopping and accepts no more changes."""

    http_status = 503


class StandaloneHerder(Herder):
    """One worker's control plane (see the module doc).

    ``offsets``, ``configs`` and ``status`` default to the file stores named
    by the worker config; tests may pass others.
    """

    def __init__(
        self,
        worker_config: WorkerConfig,
        registry: PluginRegistry,
        *,
        bootstrap: str,
        offsets: OffsetStore | None = None,
        configs: ConfigStore | None = None,
        status: StatusStore | None = None,
        worker_id: str | None = None,
    ) -> None:
        self._registry = registry
        self._worker_id = worker_id or _default_worker_id(worker_config)
        self._providers = providers_from_worker_config(worker_config.props, registry)
        self._offsets = offsets or FileOffsetStore(worker_config.offset_storage_file_filename)
        self._configs = configs or FileConfigStore(worker_config.connector_configs_file)
        self._status = status or FileStatusStore(worker_config.status_file)
        settings = RuntimeSettings.from_worker_config(worker_config, bootstrap=bootstrap)
        self._worker = Worker(self._worker_id, registry, settings, self._offsets, self)
        self._offset_admin = ConnectorOffsets(self._offsets, self._worker.topics.admin)
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorRecord] = {}
        self._control = ControlThread("herder")
        self._launcher = ConnectorLauncher(
            self._worker, self._status, self._providers, self._control, self._lock, self._record
        )
        self._stopped = False

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Load the connectors persisted by an earlier run and start them."""
        self._status.load()
        for stored in self._configs.load():
            self._call(functools.partial(self._restore, stored))

    def stop(self) -> None:
        """Stop every task (flushing source offsets) and connector; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self._control.call(self._worker.stop)
        finally:
            self._control.stop()
            self._offsets.flush()
            for provider in self._providers.values():
                try:
                    provider.close()
                except Exception:
                    log.exception("closing a config provider failed")

    def worker_id(self) -> str:
        return self._worker_id

    def worker_metrics(self) -> WorkerMetrics | None:
        return self._worker.metrics

    # -- queries -------------------------------------------------------------------------

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._connectors)

    def connector_info(self, name: str) -> ConnectorInfo:
        with self._lock:
            c = self._get(name)
            config, count, kind = dict(c.config), len(c.task_configs), c.type
        return ConnectorInfo(name, self._mask(config), tuple(range(count)), kind)

    def connector_config(self, name: str) -> dict[str, str]:
        with self._lock:
            config = dict(self._get(name).config)
        return self._mask(config)

    def task_configs(self, name: str) -> list[dict[str, str]]:
        with self._lock:
            configs = [dict(t) for t in self._get(name).task_configs]
        return [self._mask(t) for t in configs]

    def connector_status(self, name: str) -> ConnectorStatus:
        with self._lock:
            c = self._get(name)
            target, kind, problems, count = c.target, c.type, c.problems, len(c.task_configs)
        if problems is not None:
            trace = "\n".join(problems)
            return ConnectorStatus(name, kind, State.FAILED, self._worker_id, trace)
        if target is TargetState.STOPPED:
            return ConnectorStatus(name, kind, State.STOPPED, self._worker_id)
        record = self._status.connector(name) or StateRecord(State.UNASSIGNED, self._worker_id)
        recorded = self._status.tasks(name)
        tasks = tuple(
            _task_status(
                i, recorded.get(i), self._worker_id, self._worker.task_details(TaskId(name, i))
            )
            for i in range(count)
        )
        return ConnectorStatus(
            name, kind, record.state, record.worker_id, record.trace, tasks,
            self._worker.connector_details(name),
        )

    def connector_topics(self, name: str) -> list[str]:
        with self._lock:
            self._get(name)
        return sorted(self._status.topics(name))

    def reset_connector_topics(self, name: str) -> None:
        """Forget the topics recorded for ``name`` (``PUT /connectors/{c}/topics/reset``)."""
        with self._lock:
            self._get(name)
        self._status.reset_topics(name)

    def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            kind = self._get(name).type
        return self._offset_admin.read(name, kind)

    def validate_config(self, plugin: str, config: dict[str, str]) -> dict[str, Any]:
        props = {**config, "connector.class": plugin}
        result = validate_connector_config(self._registry, props, self._providers, check=True)
        return result.to_json(plugin)

    # -- changes (each runs on the control thread) ---------------------------------------

    def put_connector_config(
        self,
        name: str,
        config: dict[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState = TargetState.RUNNING,
        source: ConfigSource = "rest",
    ) -> tuple[ConnectorInfo, bool]:
        """Create or replace; ``source="file"`` for pipeline files (not persisted)."""
        config, common = self._checked(name, config)
        created = self._call(
            lambda: self._put(name, config, common, allow_replace, initial_state, source)
        )
        return self.connector_info(name), created

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        with self._lock:
            current = self._get(name)
            merged, source = dict(current.config), current.source
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        info, _ = self.put_connector_config(name, merged, allow_replace=True, source=source)
        return info

    def put_failed_connector(self, name: str, config: dict[str, str], problems: list[str]) -> None:
        self._call(lambda: self._put_failed(name, dict(config), list(problems)))

    def delete_connector(self, name: str) -> None:
        self._call(lambda: self._delete(name))

    def set_target_state(self, name: str, state: TargetState) -> None:
        self._call(lambda: self._set_target(name, state))

    def restart_connector(
        self, name: str, *, include_tasks: bool = False, only_failed: bool = False
    ) -> ConnectorStatus:
        """Restart now (both flags false) or mark RESTARTING and restart in the background."""
        plan = self._call(lambda: self._restart_plan(name, include_tasks, only_failed))
        restart_connector, task_ids = plan
        if not include_tasks and not only_failed:
            self._call(lambda: self._restart(name, restart_connector, task_ids))
            return self.connector_status(name)
        status = self.connector_status(name)
        self._control.submit(lambda: self._restart(name, restart_connector, task_ids))
        return status

    def restart_task(self, name: str, task_id: int) -> None:
        self._call(lambda: self._restart_task(name, task_id))

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> None:
        self._call(lambda: self._offset_admin.alter(name, self._stopped_type(name), offsets))

    def reset_connector_offsets(self, name: str) -> None:
        self._call(lambda: self._offset_admin.reset(name, self._stopped_type(name)))

    # -- StatusListener (from worker threads; never blocks) ------------------------------

    def on_connector_state(self, name: str, state: State, trace: str | None) -> None:
        self._status.put_connector(name, StateRecord(state, self._worker_id, trace))

    def on_task_state(self, task: TaskId, state: State, trace: str | None) -> None:
        self._status.put_task(task.connector, task.task, StateRecord(state, self._worker_id, trace))

    def on_topic_used(self, connector: str, topic: str) -> None:
        with self._lock:
            known = connector in self._connectors
        if known:
            self._status.put_topic(connector, topic)

    # -- control-thread operations -------------------------------------------------------

    def _put(
        self,
        name: str,
        config: dict[str, str],
        common: CommonConnectorConfig,
        allow_replace: bool,
        initial_state: TargetState,
        source: ConfigSource,
    ) -> bool:
        with self._lock:
            existing = self._connectors.get(name)
        if existing is not None and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        if existing is not None and existing.problems is None and existing.config == config:
            if existing.source != source:
                existing.source = source
                self._configs.put(StoredConnector(name, config, existing.target, source))
            return False
        target = initial_state
        if existing is not None and existing.problems is None:
            target = existing.target
        self._configs.put(StoredConnector(name, config, target, source))
        if existing is not None:
            self._launcher.stop(name)
        record = ConnectorRecord(
            name, config, target, source, self._type_of(config), common=common
        )
        with self._lock:
            self._connectors[name] = record
        self._launcher.start(record)
        return existing is None

    def _put_failed(self, name: str, config: dict[str, str], problems: list[str]) -> None:
        with self._lock:
            existing = self._connectors.get(name)
        if existing is not None:
            self._launcher.stop(name)
        self._configs.put(StoredConnector(name, config, TargetState.RUNNING, "file"))
        record = ConnectorRecord(
            name, config, TargetState.RUNNING, "file", self._type_of(config), problems=problems
        )
        with self._lock:
            self._connectors[name] = record
        self._status.remove_connector(name)
        self._status.put_connector(
            name, StateRecord(State.FAILED, self._worker_id, "\n".join(problems))
        )

    def _delete(self, name: str) -> None:
        with self._lock:
            self._get(name)
        self._launcher.stop(name)
        with self._lock:
            self._connectors.pop(name, None)
        self._configs.remove(name)
        self._status.remove_connector(name)
        self._status.reset_topics(name)  # a deleted connector's topics go with it (KIP-558)

    def _set_target(self, name: str, state: TargetState) -> None:
        with self._lock:
            c = self._get(name)
            previous = c.target
        if c.problems is not None:
            raise ConflictError(f"Connector {name} has an invalid config; fix it first")
        if previous is state:
            return
        with self._lock:
            c.target = state
        self._configs.put(StoredConnector(name, c.config, state, c.source))
        if state is TargetState.STOPPED:
            self._launcher.stop(name)
            with self._lock:
                c.task_configs = []
            self._status.remove_connector(name)
            self._status.put_connector(name, StateRecord(State.STOPPED, self._worker_id))
        elif previous is TargetState.STOPPED:
            self._launcher.start(c)
        else:
            paused = state is TargetState.PAUSED
            self._launcher.set_paused(name, paused)

    def _restart_plan(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> tuple[bool, list[int]]:
        """What a restart covers; marks those parts RESTARTING."""
        status = self.connector_status(name)
        with self._lock:
            c = self._get(name)
        if c.problems is not None:
            raise ConflictError(f"Connector {name} has an invalid config; fix it first")
        if c.target is TargetState.STOPPED:
            return False, []  # nothing runs: nothing to restart (resume starts it)
        restart_connector = not only_failed or status.state is State.FAILED
        tasks = [
            t.id
            for t in status.tasks
            if include_tasks and (not only_failed or t.state is State.FAILED)
        ]
        if restart_connector:
            self._status.put_connector(name, StateRecord(State.RESTARTING, self._worker_id))
        for task_id in tasks:
            self._status.put_task(name, task_id, StateRecord(State.RESTARTING, self._worker_id))
        return restart_connector, tasks

    def _restart(self, name: str, restart_connector: bool, task_ids: list[int]) -> None:
        with self._lock:
            c = self._connectors.get(name)
        if c is None or c.problems is not None or c.target is TargetState.STOPPED:
            return
        self._launcher.restart(c, restart_connector, task_ids)

    def _restart_task(self, name: str, task: int) -> None:
        with self._lock:
            c = self._get(name)
            if not 0 <= task < len(c.task_configs):
                raise NotFoundError(f"Task {name}-{task} not found")
        self._launcher.restart_task(c, task)

    def _stopped_type(self, name: str) -> ConnectorType:
        with self._lock:
            c = self._get(name)
        if c.target is not TargetState.STOPPED:
            raise ConflictError(
                f"Connector {name} must be in the STOPPED state to alter or reset its offsets "
                f"(PUT /connectors/{name}/stop)"
            )
        if c.type is ConnectorType.UNKNOWN:
            raise BadRequestError(f"Connector {name}: its connector.class cannot be resolved")
        return c.type

    # -- starting and stopping -----------------------------------------------------------

    def _restore(self, stored: StoredConnector) -> None:
        # Stored by an earlier run: validated then, checked again now; a config that no
        # longer validates is restored anyway and fails where its problem shows.
        result = validate_connector_config(self._registry, stored.config, self._providers)
        record = ConnectorRecord(
            stored.name,
            stored.config,
            stored.target_state,
            stored.source,
            self._type_of(stored.config),
            common=result.common,
            invalid=result.problems(),
        )
        with self._lock:
            if stored.name in self._connectors:
                return
            self._connectors[stored.name] = record
        if record.target is TargetState.STOPPED:
            self._status.put_connector(stored.name, StateRecord(State.STOPPED, self._worker_id))
            return
        self._launcher.start(record)

    # -- helpers -------------------------------------------------------------------------

    def _call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the control thread; ShuttingDownError once stopped."""
        try:
            return self._control.call(fn)
        except ControlThreadStopped:
            raise ShuttingDownError("the worker is shutting down") from None

    def _record(self, name: str) -> ConnectorRecord | None:
        with self._lock:
            return self._connectors.get(name)

    def _get(self, name: str) -> ConnectorRecord:
        """The connector's record (call with the lock held)."""
        c = self._connectors.get(name)
        if c is None:
            raise NotFoundError(f"Connector {name} not found")
        return c

    def _checked(
        self, name: str, config: dict[str, str]
    ) -> tuple[dict[str, str], CommonConnectorConfig]:
        """``config`` with its name set and its validated common keys.

        BadRequestError lists every problem. The common keys' model is what the
        launcher, the tasks' error handling and dead-letter queue read: the
        config is parsed here, once.
        """
        problem = connector_name_problem(name)
        if problem is not None:
            raise BadRequestError(problem)
        config = {str(k): str(v) for k, v in config.items()}
        if config.setdefault("name", name) != name:
            raise BadRequestError(
                f"Connector name configuration ({config['name']}) doesn't match connector "
                f"name in the URL ({name})"
            )
        result = validate_connector_config(self._registry, config, self._providers)
        if result.error_count:
            raise BadRequestError(
                f"Connector configuration is invalid and contains the following "
                f"{result.error_count} error(s):\n" + "\n".join(result.problems())
            )
        assert result.common is not None, "a config without problems has valid common keys"
        return config, result.common

    def _type_of(self, config: dict[str, str]) -> ConnectorType:
        try:
            return connector_type(self._registry.connector_class(config["connector.class"]))
        except (KeyError, ValueError):
            return ConnectorType.UNKNOWN

    def _mask(self, config: dict[str, str]) -> dict[str, str]:
        return mask_secrets(config, self._registry)


def _task_status(
    index: int, record: StateRecord | None, worker_id: str, details: dict[str, Any]
) -> TaskStatus:
    if record is None:
        return TaskStatus(index, State.UNASSIGNED, worker_id, details=details)
    return TaskStatus(index, record.state, record.worker_id, record.trace, details)


def _default_worker_id(config: WorkerConfig) -> str:
    """``host:port`` of the REST listener, as Kafka names workers."""
    _, host, port = config.rest_listener
    return f"{host}:{port}"
