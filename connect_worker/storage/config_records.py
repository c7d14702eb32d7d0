"""The records of the config topic (``config.storage.topic``), in Kafka Connect's format.

Keys are UTF-8 strings, values compact JSON (see :mod:`.topic_json`); a null
value is a tombstone. What Kafka Connect writes, and so what we write::

    connector-<c>          {"properties":{"connector.class":"...","tasks.max":"2",...}}
    task-<c>-<n>           {"properties":{...the task's config...}}
    commit-<c>             {"tasks":2}
    target-state-<c>       {"state":"PAUSED","state.v2":"STOPPED"}
    session-key            {"key":"<base64>","algorithm":"HmacSHA256",
                            "creation-timestamp":1700000000000}
    restart-connector-<c>  {"include-tasks":true,"only-failed":false}

Target states are ``STARTED`` (our RUNNING), ``PAUSED`` and ``STOPPED``. Since
KIP-875 the record carries ``state.v2`` with the real state and ``state`` with
what an older worker understands (PAUSED for STOPPED); readers prefer
``state.v2`` and fall back on ``state`` (records of older workers).

Deleting a connector writes tombstones for ``connector-<c>`` and
``target-state-<c>``. Kafka's ``tasks-fencing-<c>`` (exactly-once source) and
``logger-cluster-<ns>`` (KIP-976) records are recognised and ignored.

:func:`parse` turns a record into one of the small dataclasses below, or raises
:class:`BadConfigRecord` naming what is wrong; the store logs and skips those.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from connect_worker.states import TargetState
from connect_worker.storage import topic_json

CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
TARGET_STATE_PREFIX = "target-state-"
RESTART_PREFIX = "restart-connector-"
SESSION_KEY_KEY = "session-key"
_IGNORED_PREFIXES = ("tasks-fencing-", "logger-cluster-")

_TO_KAFKA = {
    TargetState.RUNNING: "STARTED",
    TargetState.PAUSED: "PAUSED",
    TargetState.STOPPED: "STOPPED",
}
_FROM_KAFKA = {name: state for state, name in _TO_KAFKA.items()}


class BadConfigRecord(ValueError):
    """A config topic record that is not in Kafka Connect's format."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """The key workers sign internal REST requests with (KIP-507)."""

    key: bytes
    algorithm: str
    creation_timestamp_ms: int


@dataclass(frozen=True, slots=True)
class RestartRequest:
    """``POST /connectors/{c}/restart`` as the leader receives it through the topic."""

    connector: str
    include_tasks: bool = False
    only_failed: bool = False


@dataclass(frozen=True, slots=True)
class ConnectorConfigRecord:
    connector: str
    config: dict[str, str] | None  # None: the connector was deleted


@dataclass(frozen=True, slots=True)
class TaskConfigRecord:
    connector: str
    task: int
    config: dict[str, str] | None  # None is not written by Kafka; ignored on read


@dataclass(frozen=True, slots=True)
class CommitRecord:
    connector: str
    tasks: int


@dataclass(frozen=True, slots=True)
class TargetStateRecord:
    connector: str
    state: TargetState | None  # None: tombstone


@dataclass(frozen=True, slots=True)
class SessionKeyRecord:
    key: SessionKey | None


@dataclass(frozen=True, slots=True)
class IgnoredRecord:
    key: str


ConfigRecord = (
    ConnectorConfigRecord
    | TaskConfigRecord
    | CommitRecord
    | TargetStateRecord
    | SessionKeyRecord
    | RestartRequest
    | IgnoredRecord
)

# -- writing ---------------------------------------------------------------------------


def connector_key(connector: str) -> bytes:
    return (CONNECTOR_PREFIX + connector).encode("utf-8")


def task_key(connector: str, task: int) -> bytes:
    return f"{TASK_PREFIX}{connector}-{task}".encode()


def commit_key(connector: str) -> bytes:
    return (COMMIT_TASKS_PREFIX + connector).encode("utf-8")


def target_state_key(connector: str) -> bytes:
    return (TARGET_STATE_PREFIX + connector).encode("utf-8")


def restart_key(connector: str) -> bytes:
    return (RESTART_PREFIX + connector).encode("utf-8")


def session_key_key() -> bytes:
    return SESSION_KEY_KEY.encode("utf-8")


def config_value(config: dict[str, str]) -> bytes:
    """The value of ``connector-<c>`` and ``task-<c>-<n>``."""
    return topic_json.encode({"properties": config})


def commit_value(tasks: int) -> bytes:
    return topic_json.encode({"tasks": tasks})


def target_state_value(state: TargetState) -> bytes:
    """KIP-875's form: ``state`` for older workers (PAUSED for STOPPED), ``state.v2`` exact."""
    legacy = _TO_KAFKA[TargetState.PAUSED] if state is TargetState.STOPPED else _TO_KAFKA[state]
    return topic_json.encode({"state": legacy, "state.v2": _TO_KAFKA[state]})


def session_key_value(key: SessionKey) -> bytes:
    return topic_json.encode(
        {
            "key": base64.b64encode(key.key).decode("ascii"),
            "algorithm": key.algorithm,
            "creation-timestamp": key.creation_timestamp_ms,
        }
    )


def restart_value(request: RestartRequest) -> bytes:
    return topic_json.encode(
        {"include-tasks": request.include_tasks, "only-failed": request.only_failed}
    )


# -- reading ---------------------------------------------------------------------------


def parse(key: bytes | None, value: bytes | None) -> ConfigRecord:
    """The record ``key``/``value`` of the config topic (BadConfigRecord if malformed)."""
    if key is None:
        raise BadConfigRecord("a config record without a key")
    try:
        name = key.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadConfigRecord(f"a config record key that is not UTF-8: {key!r}") from exc
    try:
        body = None if value is None else topic_json.decode(value)
    except ValueError as exc:
        raise BadConfigRecord(f"the value of {name!r} is not JSON: {exc}") from exc
    if name == SESSION_KEY_KEY:
        return SessionKeyRecord(None if body is None else _session_key(body))
    if name.startswith(CONNECTOR_PREFIX):
        connector = name[len(CONNECTOR_PREFIX) :]
        return ConnectorConfigRecord(connector, None if body is None else _properties(name, body))
    if name.startswith(TASK_PREFIX):
        connector, task = _task_id(name)
        return TaskConfigRecord(connector, task, None if body is None else _properties(name, body))
    if name.startswith(COMMIT_TASKS_PREFIX):
        connector = name[len(COMMIT_TASKS_PREFIX) :]
        tasks = _field(name, body, "tasks", int)
        if isinstance(tasks, bool) or tasks < 0:
            raise BadConfigRecord(f"{name!r}: 'tasks' must be a count, got {tasks!r}")
        return CommitRecord(connector, tasks)
    if name.startswith(TARGET_STATE_PREFIX):
        connector = name[len(TARGET_STATE_PREFIX) :]
        return TargetStateRecord(connector, None if body is None else _target_state(name, body))
    if name.startswith(RESTART_PREFIX):
        connector = name[len(RESTART_PREFIX) :]
        if body is None:
            return IgnoredRecord(name)
        return RestartRequest(
            connector,
            include_tasks=_flag(body, "include-tasks"),
            only_failed=_flag(body, "only-failed"),
        )
    if name.startswith(_IGNORED_PREFIXES):
        return IgnoredRecord(name)
    raise BadConfigRecord(f"unknown config record key {name!r}")


def _properties(name: str, body: Any) -> dict[str, str]:
    props = _field(name, body, "properties", dict)
    if not all(isinstance(v, str) or v is None for v in props.values()):
        raise BadConfigRecord(f"{name!r}: 'properties' values must be strings")
    return {str(k): v for k, v in props.items() if v is not None}


def _task_id(name: str) -> tuple[str, int]:
    connector, sep, number = name[len(TASK_PREFIX) :].rpartition("-")
    if not sep or not connector or not number.isdigit():
        raise BadConfigRecord(f"bad task config key {name!r}: expected task-<connector>-<n>")
    return connector, int(number)


def _target_state(name: str, body: Any) -> TargetState:
    if not isinstance(body, dict):
        raise BadConfigRecord(f"{name!r}: expected a JSON object, got {body!r}")
    raw = body.get("state.v2")
    if not isinstance(raw, str):
        raw = body.get("state")
    state = _FROM_KAFKA.get(raw) if isinstance(raw, str) else None
    if state is None:
        raise BadConfigRecord(f"{name!r}: unknown target state {raw!r}")
    return state


def _session_key(body: Any) -> SessionKey:
    name = SESSION_KEY_KEY
    encoded = _field(name, body, "key", str)
    algorithm = _field(name, body, "algorithm", str)
    created = _field(name, body, "creation-timestamp", int)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadConfigRecord(f"{name!r}: 'key' is not base64: {exc}") from exc
    return SessionKey(key, algorithm, created)


def _flag(body: Any, field: str) -> bool:
    """Kafka defaults a missing or malformed restart flag to false."""
    value = body.get(field) if isinstance(body, dict) else None
    return value if isinstance(value, bool) else False


def _field(name: str, body: Any, field: str, kind: type) -> Any:
    if not isinstance(body, dict):
        raise BadConfigRecord(f"{name!r}: expected a JSON object, got {body!r}")
    value = body.get(field)
    if not isinstance(value, kind):
        raise BadConfigRecord(
            f"{name!r}: field {field!r} should be {kind.__name__}, got {value!r}"
        )
    return value
