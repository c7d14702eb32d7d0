"""The control plane's contract: what REST handlers, the folder watcher and the CLI call.

The herder owns connector configs, target states and statuses; the worker only
starts and stops what the herder tells it to. REST handlers and the watcher are
thin calls into these methods (STYLE practice 8). Every method is synchronous
and thread-safe; long work (starting tasks) happens in the worker's threads.

Errors (mapped to HTTP codes in one place by the REST layer):

- :class:`NotFoundError` -> 404, :class:`AlreadyExistsError` -> 409,
  :class:`BadRequestError` -> 400 (invalid config: message lists every problem),
  :class:`ConflictError` -> 409 (e.g. offsets changed while not STOPPED).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from connect_worker.states import ConnectorType, State, TargetState

if TYPE_CHECKING:
    from connect_worker.metrics.task_metrics import WorkerMetrics

ConfigSource = Literal["rest", "file"]
"""Where a connector's config comes from: REST (persisted by the herder) or a
pipeline file (the folder is the source of truth; not persisted)."""


class HerderError(Exception):
    """Base of the control plane's errors; ``http_status`` is what REST answers."""

    http_status = 500


class NotFoundError(HerderError):
    http_status = 404


class AlreadyExistsError(HerderError):
    http_status = 409


class ConflictError(HerderError):
    http_status = 409


class BadRequestError(HerderError):
    http_status = 400


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """``{"id", "state", "worker_id", "trace"?}``."""

    id: int
    state: State
    worker_id: str
    trace: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # progress the task reports


@dataclass(frozen=True, slots=True)
class ConnectorStatus:
    """``GET /connectors/{c}/status``: the connector's and its tasks' states."""

    name: str
    type: ConnectorType
    state: State
    worker_id: str
    trace: str | None = None
    tasks: tuple[TaskStatus, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)  # progress a connector reports


@dataclass(frozen=True, slots=True)
class ConnectorInfo:
    """``GET /connectors/{c}``: its config (secrets masked) and task ids."""

    name: str
    config: dict[str, str]
    tasks: tuple[int, ...]
    type: ConnectorType


class Herder(ABC):
    """The control plane of one worker (standalone) or of the cluster (distributed)."""

    @abstractmethod
    def connectors(self) -> list[str]: ...

    @abstractmethod
    def connector_info(self, name: str) -> ConnectorInfo: ...

    @abstractmethod
    def connector_config(self, name: str) -> dict[str, str]:
        """The stored config, with secrets masked."""

    @abstractmethod
    def put_connector_config(
        self,
        name: str,
        config: dict[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState = TargetState.RUNNING,
        source: ConfigSource = "rest",
    ) -> tuple[ConnectorInfo, bool]:
        """Create or replace; returns (info, created). Invalid config: BadRequestError.

        ``source`` says where the config came from: ``file`` (a pipeline file: the
        folder is its source of truth, so the herder does not persist it) or ``rest``.
        """

    @abstractmethod
    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        """Merge ``patch`` into the config; a None value removes the key."""

    @abstractmethod
    def put_failed_connector(self, name: str, config: dict[str, str], problems: list[str]) -> None:
        """Record a connector whose config cannot even be validated (a broken pipeline
        file): it is listed, in state FAILED, with ``problems`` as its trace."""

    @abstractmethod
    def delete_connector(self, name: str) -> None: ...

    @abstractmethod
    def connector_status(self, name: str) -> ConnectorStatus: ...

    @abstractmethod
    def task_configs(self, name: str) -> list[dict[str, str]]:
        """Each task's effective config, secrets masked."""

    @abstractmethod
    def set_target_state(self, name: str, state: TargetState) -> None:
        """Pause, resume or stop a connector (and its tasks)."""

    @abstractmethod
    def restart_connector(
        self, name: str, *, include_tasks: bool = False, only_failed: bool = False
    ) -> ConnectorStatus: ...

    @abstractmethod
    def restart_task(self, name: str, task_id: int) -> None: ...

    @abstractmethod
    def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        """``[{"partition": {...}, "offset": {...}}]`` (sinks: kafka_topic/partition/offset)."""

    @abstractmethod
    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> None:
        """Needs STOPPED (else ConflictError); a None offset deletes it."""

    @abstractmethod
    def reset_connector_offsets(self, name: str) -> None:
        """Needs STOPPED (else ConflictError)."""

    @abstractmethod
    def connector_topics(self, name: str) -> list[str]: ...

    @abstractmethod
    def reset_connector_topics(self, name: str) -> None:
        """Forget the topics recorded for ``name`` (``PUT /connectors/{c}/topics/reset``)."""

    @abstractmethod
    def validate_config(self, plugin: str, config: dict[str, str]) -> dict[str, Any]:
        """Kafka Connect's validate response: ``{name, error_count, groups, configs}``."""

    @abstractmethod
    def worker_id(self) -> str: ...

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """``POST /connectors/{c}/tasks``: a distributed worker publishing the task
        configs its connector generated (through the leader); not in standalone mode."""
        raise NotFoundError("task configs are published only between distributed workers")

    def check_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Raise unless an internal request is signed as the cluster requires (KIP-507);
        standalone workers require nothing."""
        return None

    def verify_worker_request(self, method: str, target: bytes, body: bytes, header: str) -> bool:
        """Whether a request another worker of the cluster signed for itself is genuine
        (distributed mode; ``target`` is the path and query as sent). Standalone: never."""
        return False

    def worker_metrics(self) -> WorkerMetrics | None:
        """What this worker's runtime measures (``GET /metrics``); None when not measured."""
        return None
