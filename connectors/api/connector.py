"""The connector base class: configuration in, task configurations out.

Lifecycle (the runtime calls these in this order, from one thread)::

    initialize(context) -> start(props) -> task_configs(max_tasks) -> ... -> stop()

- ``start`` validates ``props`` (the connector's full properties, strings) and
  may contact the external system to plan tasks; raise ConfigError for a
  config that cannot work, ConnectError for anything else.
- ``task_configs(max_tasks)`` returns at most ``max_tasks`` dicts; each becomes
  one task's properties (merged over the connector's). Call
  ``context.request_task_reconfiguration()`` when the plan changes (a new table).
- ``stop`` releases what ``start`` took; it must not block for long.
- ``check(props)`` is optional: test connectivity with a real call and return
  human-readable problems (``sluice validate`` prints them). Default: none.
- ``details()`` is optional: progress for the status (snapshot rows done, a
  connection state, a query's last batch). Tasks have the same method; the
  status shows a task's under ``tasks[i].details``.

Class attributes: ``config_model`` (the pydantic model of its keys), ``aliases``
(short names and foreign class names users may put in ``connector.class``),
``version``, ``task_class()``, and ``config_prefixes``: key prefixes the
connector reads beyond its model (e.g. ``spark.conf.``), so that the worker
does not list such keys among those nothing reads.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from connectors.api.config import PluginConfig


class ConnectorContext(Protocol):
    """What a connector may ask of the runtime."""

    def request_task_reconfiguration(self) -> None:
        """Ask for ``task_configs`` to be called again and tasks restarted."""

    def raise_error(self, error: Exception) -> None:
        """Fail the connector from a background thread of its own."""

    @property
    def bootstrap_servers(self) -> str:
        """The worker's Kafka cluster (``host:port,...``), embedded broker or not.

        A plugin that reads or writes the log itself (SparkSink's query) uses it
        unless its config names another cluster.
        """


class Connector(ABC):
    """Common base of :class:`SourceConnector` and :class:`SinkConnector`."""

    config_model: ClassVar[type[PluginConfig]] = PluginConfig
    aliases: ClassVar[tuple[str, ...]] = ()
    version: ClassVar[str] = "0.1.0"
    config_prefixes: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.context: ConnectorContext | None = None

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Validate and keep the configuration; plan the work."""

    @classmethod
    @abstractmethod
    def task_class(cls) -> type:
        """The task class (a SourceTask or SinkTask subclass)."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Split the work into at most ``max_tasks`` task configurations."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Release resources taken in :meth:`start`."""

    def check(self, props: Mapping[str, str]) -> list[str]:
        """Test connectivity to the external system; return problems found."""
        return []

    def details(self) -> dict[str, Any]:
        """Progress to show in the connector's status (JSON-serialisable; default none).

        Polled (from another thread) by ``GET /connectors/{c}/status``, which
        shows it under ``details``; keep it cheap and thread-safe.
        """
        return {}
