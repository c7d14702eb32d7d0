"""Connector and task statuses and active topics in the status topic, as Kafka Connect keeps them.

The role of Kafka's KafkaStatusBackingStore, behind the
:class:`~connect_worker.storage.status.StatusStore` interface. Records of
``status.storage.topic`` (5 partitions by default, compacted)::

    status-connector-<c>            {"state":"RUNNING","trace":null,
                                     "worker_id":"10.0.0.5:8083","generation":7}
    status-task-<c>-<n>             (the same shape)
    status-topic-<t>:connector-<c>  {"topic":{"name":"<t>","connector":"<c>","task":0,
                                              "discoverTimestamp":1700000000000}}

A null value deletes (a deleted connector or task, a reset of active topics).
Every worker reads the whole topic into memory and follows it; REST reads
come from there.

Generations: each status carries the group generation of the worker that
wrote it. :meth:`TopicStatusStore.put_connector` and :meth:`put_task` always
write (a worker reporting its own work starting); the ``*_safe`` variants,
for what a worker reports while it may have lost its work to a rebalance
(stopping, failing), write only if the status this worker knows was written
by the same worker or by an older or equal generation, as Kafka's
``putSafe`` does, so a zombie worker does not overwrite the status of the
worker that now runs the task. Reading always takes what the topic says, in
the topic's order. Malformed records are logged and skipped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from connect_worker.states import State
from connect_worker.storage import topic_json
from connect_worker.storage.status import StateRecord, StatusStoreError
from connect_worker.storage.topic_log import TopicLog, TopicSettings, TopicStoreError
from log_engine.client import ConsumerRecord

log = logging.getLogger(__name__)

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"


def connector_status_key(connector: str) -> bytes:
    return (CONNECTOR_STATUS_PREFIX + connector).encode("utf-8")


def task_status_key(connector: str, task: int) -> bytes:
    return f"{TASK_STATUS_PREFIX}{connector}-{task}".encode()


def topic_status_key(connector: str, topic: str) -> bytes:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}".encode()


def status_value(record: StateRecord) -> bytes:
    """Kafka's STATUS_SCHEMA_V0 fields, in its order; ``trace`` null when absent."""
    return topic_json.encode(
        {
            "state": record.state.value,
            "trace": record.trace,
            "worker_id": record.worker_id,
            "generation": record.generation,
        }
    )


def topic_status_value(connector: str, topic: str, task: int, discovered_ms: int) -> bytes:
    return topic_json.encode(
        {
            "topic": {
                "name": topic,
                "connector": connector,
                "task": task,
                "discoverTimestamp": discovered_ms,
            }
        }
    )


def parse_status(value: bytes) -> StateRecord:
    """A status value (ValueError if it is not Kafka's shape)."""
    body = topic_json.decode(value)
    if not isinstance(body, dict):
        raise ValueError(f"expected a JSON object, got {body!r}")
    state, trace = body.get("state"), body.get("trace")
    worker_id, generation = body.get("worker_id"), body.get("generation")
    if not isinstance(state, str) or state not in State.__members__:
        raise ValueError(f"unknown state {state!r}")
    if not isinstance(worker_id, str):
        raise ValueError(f"'worker_id' should be a string, got {worker_id!r}")
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise ValueError(f"'generation' should be an integer, got {generation!r}")
    if trace is not None and not isinstance(trace, str):
        raise ValueError(f"'trace' should be a string or null, got {trace!r}")
    return StateRecord(State(state), worker_id, trace, generation)


class TopicStatusStore:
    """Statuses shared by the cluster's workers through a compacted topic; thread-safe.

    Lifecycle: construct -> :meth:`load` (creates or checks the topic, reads it to
    the end; StatusStoreError on failure) -> puts and reads ... -> :meth:`stop`.
    Writes are asynchronous (as in Kafka); this worker's view is updated at
    once and then by what the topic says. :meth:`flush` waits for them.
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        *,
        partitions: int = 5,
        replication_factor: int = -1,
        read_timeout_ms: int = 30000,
    ) -> None:
        settings = TopicSettings(
            name=topic,
            setting="status.storage.topic",
            purpose="connector and task statuses",
            partitions=partitions,
            replication_factor=replication_factor,
        )
        self._log = TopicLog(
            settings, client_config, self._consume, read_timeout_ms=read_timeout_ms
        )
        self._lock = threading.Lock()
        self._connectors: dict[str, StateRecord] = {}
        self._tasks: dict[str, dict[int, StateRecord]] = {}
        self._topics: dict[str, set[str]] = {}

    @property
    def topic(self) -> str:
        return self._log.topic

    def load(self) -> None:
        try:
            self._log.start()
        except TopicStoreError as exc:
            raise StatusStoreError(str(exc)) from exc

    def stop(self) -> None:
        self._log.stop()

    def refresh(self, timeout_ms: int | None = None) -> None:
        """Read the topic to its end (REST reads that must see other workers' latest)."""
        self._log.read_to_end(timeout_ms)

    def flush(self, timeout_ms: int | None = None) -> None:
        self._log.flush(timeout_ms)

    # -- statuses --------------------------------------------------------------------------

    def put_connector(self, name: str, record: StateRecord) -> None:
        with self._lock:
            self._connectors[name] = record
        self._send(connector_status_key(name), status_value(record))

    def put_task(self, name: str, task_id: int, record: StateRecord) -> None:
        with self._lock:
            self._tasks.setdefault(name, {})[task_id] = record
        self._send(task_status_key(name, task_id), status_value(record))

    def put_connector_safe(self, name: str, record: StateRecord) -> bool:
        """Write unless a newer generation's status of another worker is known; whether written."""
        with self._lock:
            if not _can_write_safely(self._connectors.get(name), record):
                return False
            self._connectors[name] = record
        self._send(connector_status_key(name), status_value(record))
        return True

    def put_task_safe(self, name: str, task_id: int, record: StateRecord) -> bool:
        """As :meth:`put_connector_safe`, for a task."""
        with self._lock:
            if not _can_write_safely(self._tasks.get(name, {}).get(task_id), record):
                return False
            self._tasks.setdefault(name, {})[task_id] = record
        self._send(task_status_key(name, task_id), status_value(record))
        return True

    def connector(self, name: str) -> StateRecord | None:
        with self._lock:
            return self._connectors.get(name)

    def tasks(self, name: str) -> dict[int, StateRecord]:
        with self._lock:
            return dict(self._tasks.get(name, {}))

    def connectors(self) -> list[str]:
        """The connectors with a known status."""
        with self._lock:
            return sorted(self._connectors)

    def remove_task(self, name: str, task_id: int) -> None:
        with self._lock:
            self._tasks.get(name, {}).pop(task_id, None)
        self._send(task_status_key(name, task_id), None)

    def remove_connector(self, name: str) -> None:
        """Tombstones for the connector's status and its known tasks' (not its topics)."""
        with self._lock:
            self._connectors.pop(name, None)
            tasks = sorted(self._tasks.pop(name, {}))
        self._send(connector_status_key(name), None)
        for task_id in tasks:
            self._send(task_status_key(name, task_id), None)

    # -- active topics (KIP-558) -----------------------------------------------------------

    def put_topic(self, name: str, topic: str, task: int = 0) -> None:
        with self._lock:
            known = self._topics.setdefault(name, set())
            if topic in known:
                return
            known.add(topic)
        now_ms = int(time.time() * 1000)
        self._send(topic_status_key(name, topic), topic_status_value(name, topic, task, now_ms))

    def topics(self, name: str) -> set[str]:
        with self._lock:
            return set(self._topics.get(name, ()))

    def reset_topics(self, name: str) -> None:
        with self._lock:
            topics = sorted(self._topics.pop(name, set()))
        for topic in topics:
            self._send(topic_status_key(name, topic), None)

    # -- plumbing --------------------------------------------------------------------------

    def _send(self, key: bytes, value: bytes | None) -> None:
        try:
            future = self._log.send(key, value)
        except Exception as exc:  # a status is best effort: log, never fail the caller
            log.error("cannot write status %s to topic %s: %s", key.decode(), self.topic, exc)
            return
        future.add_done_callback(lambda f: _log_failure(f, key, self.topic))

    def _consume(self, record: ConsumerRecord) -> None:
        try:
            key = (record.key or b"").decode("utf-8")
            self._apply(key, record.value)
        except ValueError as exc:
            log.error(
                "skipping status record %d-%d of topic %s: %s",
                record.partition,
                record.offset,
                record.topic,
                exc,
            )

    def _apply(self, key: str, value: bytes | None) -> None:
        if key.startswith(CONNECTOR_STATUS_PREFIX):
            name = key[len(CONNECTOR_STATUS_PREFIX) :]
            status = None if value is None else parse_status(value)
            with self._lock:
                if status is None:
                    self._connectors.pop(name, None)
                else:
                    self._connectors[name] = status
        elif key.startswith(TASK_STATUS_PREFIX):
            name, sep, number = key[len(TASK_STATUS_PREFIX) :].rpartition("-")
            if not sep or not name or not number.isdigit():
                raise ValueError(f"bad task status key {key!r}")
            status = None if value is None else parse_status(value)
            with self._lock:
                if status is None:
                    self._tasks.get(name, {}).pop(int(number), None)
                else:
                    self._tasks.setdefault(name, {})[int(number)] = status
        elif key.startswith(TOPIC_STATUS_PREFIX):
            topic, sep, name = key[len(TOPIC_STATUS_PREFIX) :].partition(TOPIC_STATUS_SEPARATOR)
            if not sep or not topic or not name:
                raise ValueError(f"bad topic status key {key!r}")
            if value is not None:
                _check_topic_status(topic_json.decode(value))
            with self._lock:
                if value is None:
                    self._topics.get(name, set()).discard(topic)
                else:
                    self._topics.setdefault(name, set()).add(topic)
        else:
            raise ValueError(f"unknown status record key {key!r}")


def _can_write_safely(current: StateRecord | None, record: StateRecord) -> bool:
    return (
        current is None
        or current.worker_id == record.worker_id
        or current.generation <= record.generation
    )


def _check_topic_status(body: Any) -> None:
    inner = body.get("topic") if isinstance(body, dict) else None
    if not isinstance(inner, dict) or not isinstance(inner.get("name"), str):
        raise ValueError(f"expected {{\"topic\": {{\"name\": ...}}}}, got {body!r}")


def _log_failure(future: Any, key: bytes, topic: str) -> None:
    error = future.exception()
    if error is not None:
        log.error("writing status %s to topic %s failed: %s", key.decode(), topic, error)
