"""One connector object at run time: start it, ask it for task configs, stop it.

Lifecycle (driven by the worker, on the herder's thread)::

    ConnectorInstance(name, cls, props, ...) -> start() -> task_configs(max) ... -> stop()

``start`` reports RUNNING (or PAUSED) or, when the plugin raises, FAILED with
the trace; ``stop`` reports nothing (the herder decides what a stopped
connector shows). The plugin may call its context from threads of its own:
``request_task_reconfiguration`` is handed to the herder, which recomputes
task configs on its thread; ``raise_error`` marks the connector FAILED;
``bootstrap_servers`` is the worker's cluster.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from connect_worker.log_context import connector_context
from connect_worker.runtime.details import plugin_details
from connect_worker.runtime.status import StatusListener
from connect_worker.states import ConnectorType, State
from connectors.api import Connector, SinkConnector, SourceConnector

log = logging.getLogger(__name__)


def connector_type(cls: type) -> ConnectorType:
    """``source``/``sink`` from the class's base, else ``unknown``."""
    if issubclass(cls, SourceConnector):
        return ConnectorType.SOURCE
    if issubclass(cls, SinkConnector):
        return ConnectorType.SINK
    return ConnectorType.UNKNOWN


class _Context:
    """The :class:`connectors.api.ConnectorContext` of one instance."""

    def __init__(self, instance: ConnectorInstance) -> None:
        self._instance = instance

    @property
    def bootstrap_servers(self) -> str:
        return self._instance.bootstrap_servers

    def request_task_reconfiguration(self) -> None:
        self._instance.reconfiguration_requested()

    def raise_error(self, error: Exception) -> None:
        self._instance.failed(error)


class ConnectorInstance:
    """A started :class:`Connector` plugin (see the module doc)."""

    def __init__(
        self,
        name: str,
        cls: type[Connector],
        props: Mapping[str, str],
        listener: StatusListener,
        on_reconfigure: Callable[[str], None],
        bootstrap_servers: str,
    ) -> None:
        self.name = name
        self.bootstrap_servers = bootstrap_servers
        self.cls = cls
        self.type = connector_type(cls)
        self.props = dict(props)
        self._listener = listener
        self._on_reconfigure = on_reconfigure
        self._connector: Connector | None = None
        self.state = State.UNASSIGNED

    def start(self, *, paused: bool = False) -> bool:
        """Instantiate, initialize and start the plugin; False (and FAILED) if it raised."""
        try:
            with connector_context(self.name):
                connector = self.cls()
                connector.initialize(_Context(self))
                connector.start(self.props)
        except Exception as exc:
            log.exception("connector %s failed to start", self.name)
            self._report(State.FAILED, _trace(exc))
            return False
        self._connector = connector
        self._report(State.PAUSED if paused else State.RUNNING, None)
        return True

    @property
    def started(self) -> bool:
        return self._connector is not None

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """The plugin's task configs (each merged over the connector's props by the caller)."""
        assert self._connector is not None, "task_configs() before a successful start()"
        with connector_context(self.name):
            configs = self._connector.task_configs(max_tasks)
        if len(configs) > max_tasks:
            raise ValueError(
                f"connector {self.name} returned {len(configs)} task configs for tasks.max "
                f"{max_tasks}"
            )
        return [{str(k): str(v) for k, v in c.items()} for c in configs]

    def details(self) -> dict[str, Any]:
        """The plugin connector's progress for its status (``{}`` when not started)."""
        return plugin_details(self._connector, f"connector {self.name}")

    def set_paused(self, paused: bool) -> None:
        if self.state in (State.RUNNING, State.PAUSED):
            self._report(State.PAUSED if paused else State.RUNNING, None)

    def stop(self) -> None:
        connector, self._connector = self._connector, None
        if connector is None:
            return
        try:
            with connector_context(self.name):
                connector.stop()
        except Exception:
            log.exception("connector %s: stop() raised", self.name)

    # -- from the plugin's context -------------------------------------------------------

    def reconfiguration_requested(self) -> None:
        if self._connector is not None:
            self._on_reconfigure(self.name)

    def failed(self, error: BaseException) -> None:
        if self._connector is None:  # stopped meanwhile: nothing to report
            return
        log.error("connector %s raised an error: %s", self.name, error)
        self._report(State.FAILED, _trace(error))

    def _report(self, state: State, trace: str | None) -> None:
        self.state = state
        self._listener.on_connector_state(self.name, state, trace)


def _trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))
