"""Puts a connector's desired state into effect on the worker.

The herder decides (configs, target states); the launcher carries a
decision out for one connector: resolve its config's provider references,
start the connector object, ask it for task configs and start one task per
config, restart some of them, or stop everything. It runs on the herder's
control thread only; the records it updates are shared with the herder's
queries under the herder's lock.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from connect_worker.config_providers import resolve_references
from connect_worker.connector_config import CommonConnectorConfig
from connect_worker.herder.control_thread import ControlThread, ControlThreadStopped
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.worker import Worker
from connect_worker.states import ConnectorType, State, TargetState
from connect_worker.storage.configs import ConfigSource
from connect_worker.storage.status import StateRecord, StatusStore
from connectors.api import ConfigError
from connectors.api.config_provider import ConfigProvider


@dataclass(slots=True)
class ConnectorRecord:
    """The control plane's view of one connector."""

    name: str
    config: dict[str, str]  # as given: provider references unresolved
    target: TargetState
    source: ConfigSource
    type: ConnectorType = ConnectorType.UNKNOWN
    task_configs: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] | None = None  # a placeholder for a config that cannot be used


class ConnectorLauncher:
    """Starts, refreshes, restarts and stops connectors on a :class:`Worker`.

    ``lookup`` finds a connector's current record (for reconfiguration
    requests coming from plugin threads); ``lock`` is the herder's state lock.
    """

    def __init__(
        self,
        worker: Worker,
        status: StatusStore,
        providers: Mapping[str, ConfigProvider],
        control: ControlThread,
        lock: threading.Lock,
        lookup: Callable[[str], ConnectorRecord | None],
    ) -> None:
        self._worker = worker
        self._status = status
        self._providers = providers
        self._control = control
        self._lock = lock
        self._lookup = lookup
        self._reconfigure_pending: set[str] = set()

    def start(self, c: ConnectorRecord) -> None:
        """Start the connector object and its tasks as its target state says."""
        self._status.remove_connector(c.name)
        if c.target is TargetState.STOPPED:
            self._put_connector(c.name, State.STOPPED)
            return
        props = self.resolved(c)
        if props is None:
            return
        if self._start_object(c, props):
            self.refresh_tasks(c, props, force=True)

    def stop(self, name: str) -> None:
        """Stop the tasks (joined, offsets flushed), then the connector object."""
        self._worker.stop_tasks(self._worker.task_ids(name))
        self._worker.stop_connector(name)

    def set_paused(self, name: str, paused: bool) -> None:
        self._worker.set_connector_paused(name, paused)
        self._worker.set_tasks_paused(self._worker.task_ids(name), paused)

    def restart(self, c: ConnectorRecord, restart_connector: bool, task_ids: list[int]) -> None:
        """Restart the connector object (new task configs restart all tasks) and/or tasks."""
        if restart_connector:
            props = self.resolved(c)
            if props is None or not self._start_object(c, props):
                return
            if self.refresh_tasks(c, props, force=False) is not False:
                return  # failed, or every task was restarted with new configs
        ids = [TaskId(c.name, i) for i in task_ids if i < len(c.task_configs)]
        self._worker.stop_tasks(ids)
        for task_id in ids:
            self._start_task(c, task_id.task)

    def restart_task(self, c: ConnectorRecord, index: int) -> None:
        self._worker.stop_tasks([TaskId(c.name, index)])
        self._start_task(c, index)

    def refresh_tasks(
        self, c: ConnectorRecord, props: dict[str, str], *, force: bool
    ) -> bool | None:
        """Ask the connector for task configs; (re)start tasks if they changed or ``force``.

        Returns True when tasks were (re)started, False when nothing changed,
        None when the connector failed to produce configs (it is then FAILED).
        """
        try:
            max_tasks = CommonConnectorConfig.from_props(props).tasks_max
            configs = self._worker.connector_task_configs(c.name, max_tasks)
        except Exception as exc:
            self._worker.stop_tasks(self._worker.task_ids(c.name))
            self.fail(c.name, exc)
            return None
        if not force and configs == c.task_configs:
            return False
        self._worker.stop_tasks(self._worker.task_ids(c.name))
        with self._lock:
            c.task_configs = configs
        for task_id in list(self._status.tasks(c.name)):
            if task_id >= len(configs):
                self._status.remove_task(c.name, task_id)
        for index in range(len(configs)):
            self._start_task(c, index)
        return True

    def reconfigure(self, name: str) -> None:
        """A connector asked for new task configs (from any thread): queue it once."""
        with self._lock:
            if name in self._reconfigure_pending:
                return
            self._reconfigure_pending.add(name)

        def run() -> None:
            with self._lock:
                self._reconfigure_pending.discard(name)
            c = self._lookup(name)
            if c is None or c.problems is not None or not self._worker.is_connector_running(name):
                return
            props = self.resolved(c)
            if props is not None:
                self.refresh_tasks(c, props, force=False)

        with contextlib.suppress(ControlThreadStopped):  # shutting down: nothing to do
            self._control.submit(run)

    def resolved(self, c: ConnectorRecord) -> dict[str, str] | None:
        """The config with provider references resolved; None (and FAILED) if impossible."""
        try:
            return resolve_references(c.config, self._providers)
        except ConfigError as exc:
            self.fail(c.name, exc)
            return None

    def fail(self, name: str, error: BaseException) -> None:
        """Show the connector FAILED with ``error``'s traceback."""
        trace = "".join(traceback.format_exception(error))
        self._status.put_connector(name, StateRecord(State.FAILED, self._worker.worker_id, trace))

    def _start_object(self, c: ConnectorRecord, props: dict[str, str]) -> bool:
        try:
            return self._worker.start_connector(
                c.name,
                props,
                paused=c.target is TargetState.PAUSED,
                on_reconfigure=self.reconfigure,
            )
        except Exception as exc:  # e.g. the class vanished from plugin.path
            self.fail(c.name, exc)
            return False

    def _start_task(self, c: ConnectorRecord, index: int) -> None:
        props = self.resolved(c)
        if props is None:
            return
        self._status.put_task(c.name, index, StateRecord(State.UNASSIGNED, self._worker.worker_id))
        self._worker.start_task(
            TaskId(c.name, index),
            props,
            c.task_configs[index],
            paused=c.target is TargetState.PAUSED,
        )

    def _put_connector(self, name: str, state: State) -> None:
        self._status.put_connector(name, StateRecord(state, self._worker.worker_id))
