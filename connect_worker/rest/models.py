"""Request bodies and response shapes of the REST API, as Kafka Connect spells them.

Response helpers turn the herder's dataclasses into Kafka Connect's JSON
(``trace`` only when there is one, tasks as ``{"connector", "task"}`` ids).
Request models accept what Kafka Connect accepts: config values are strings,
but JSON numbers and booleans are taken as their string form (Jackson does the
same), so ``"tasks.max": 2`` works.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from connect_worker.herder.api import ConnectorInfo, ConnectorStatus, TaskStatus
from connect_worker.security.redaction import SECRETS
from connect_worker.states import TargetState


def _as_config_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


ConfigValue = Annotated[str, BeforeValidator(_as_config_string)]
ConfigMap = dict[str, ConfigValue]
ConfigPatch = dict[str, ConfigValue | None]


class CreateConnectorRequest(BaseModel):
    """``POST /connectors``: a name, its config and optionally the state to start in."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = Field(None, description="The connector's unique name.")
    config: ConfigMap = Field(description="The connector's properties.")
    initial_state: TargetState | None = Field(
        None, description="RUNNING (default), PAUSED or STOPPED."
    )


class OffsetsRequest(BaseModel):
    """``PATCH /connectors/{c}/offsets``: ``{"offsets": [{"partition", "offset"}]}``."""

    offsets: list[dict[str, Any]] | None = Field(
        None, description='Entries {"partition": {...}, "offset": {...} or null}.'
    )


class LoggerLevelRequest(BaseModel):
    """``PUT /admin/loggers/{name}``: ``{"level": "DEBUG"}``."""

    model_config = ConfigDict(extra="ignore")

    level: str | None = Field(None, description="TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF.")


def connector_info_json(info: ConnectorInfo) -> dict[str, Any]:
    """``{"name", "config", "tasks": [{"connector", "task"}], "type"}``."""
    return {
        "name": info.name,
        "config": info.config,
        "tasks": [{"connector": info.name, "task": task} for task in info.tasks],
        "type": str(info.type),
    }


def task_status_json(status: TaskStatus) -> dict[str, Any]:
    """``{"id", "state", "worker_id", "trace"?}``."""
    body: dict[str, Any] = {
        "id": status.id,
        "state": str(status.state),
        "worker_id": status.worker_id,
    }
    if status.trace:
        body["trace"] = SECRETS.redact(status.trace)
    if status.details:
        body["details"] = _redacted(status.details)
    return body


def _redacted(details: dict[str, Any]) -> dict[str, Any]:
    """Progress details with secret values hidden in their texts (``last.error``)."""
    return {k: SECRETS.redact(v) if isinstance(v, str) else v for k, v in details.items()}


def connector_status_json(status: ConnectorStatus) -> dict[str, Any]:
    """``{"name", "connector": {"state", "worker_id", "trace"?}, "tasks": [...], "type"}``.

    ``details`` (progress a connector reports) is Sluice's addition, present
    only when the connector reports something.
    """
    connector: dict[str, Any] = {"state": str(status.state), "worker_id": status.worker_id}
    if status.trace:
        connector["trace"] = SECRETS.redact(status.trace)
    body: dict[str, Any] = {
        "name": status.name,
        "connector": connector,
        "tasks": [task_status_json(task) for task in status.tasks],
        "type": str(status.type),
    }
    if status.details:
        body["details"] = _redacted(status.details)
    return body
