"""Connector configs, task configs, target states and the session key in the config topic.

The role of Kafka's KafkaConfigBackingStore: every worker reads the whole
config topic (``config.storage.topic``, one partition, compacted) into memory
and follows it; the leader writes. Records are in Kafka Connect's format (see
:mod:`.config_records`), so a Kafka Connect cluster's topic can be read by us
and ours by its tools.

Rules kept from Kafka:

- task configs (``task-<c>-<n>``) wait, deferred, until a ``commit-<c>``
  record says how many tasks the connector has; only then, and only when the
  deferred configs cover tasks 0..n-1, do they replace the connector's task
  configs. A commit that finds an incomplete set (compaction, or a leader that
  died mid-write) marks the connector *inconsistent* in the snapshot and the
  herder must re-publish its task configs. Deferred configs are dropped at
  each commit either way.
- a ``connector-<c>`` tombstone forgets the connector and its task configs;
  a commit for an unknown connector is ignored.
- a connector without a target-state record is STARTED (RUNNING).
- a malformed record (torn or invalid JSON, unknown key) is logged and
  skipped; it never stops the worker.

The listener is told about changes only after :meth:`ConfigTopicStore.start`
has read the topic to its end, on the log's reader thread (as in Kafka).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_worker.states import TargetState
from connect_worker.storage import config_records as rec
from connect_worker.storage.config_records import RestartRequest, SessionKey
from connect_worker.storage.configs import StoredConnector
from connect_worker.storage.topic_log import TopicLog, TopicSettings, TopicStoreError
from log_engine.client import ConsumerRecord

log = logging.getLogger(__name__)

TaskId = tuple[str, int]


@dataclass(frozen=True, slots=True)
class ConfigSnapshot:
    """A consistent view of the config topic (Kafka's ClusterConfigState).

    ``offset`` is the offset of the next record to read from the config topic:
    workers compare it in rebalances to know who is behind.
    """

    offset: int = 0
    session_key: SessionKey | None = None
    connectors: Mapping[str, dict[str, str]] = field(default_factory=dict)
    target_states: Mapping[str, TargetState] = field(default_factory=dict)
    task_counts: Mapping[str, int] = field(default_factory=dict)
    task_configs: Mapping[TaskId, dict[str, str]] = field(default_factory=dict)
    inconsistent: frozenset[str] = frozenset()

    def contains(self, connector: str) -> bool:
        return connector in self.connectors

    def target_state(self, connector: str) -> TargetState | None:
        return self.target_states.get(connector)

    def tasks(self, connector: str) -> list[dict[str, str]]:
        """The committed task configs of ``connector``, by task number (empty if inconsistent)."""
        if connector in self.inconsistent:
            return []
        count = self.task_counts.get(connector, 0)
        return [dict(self.task_configs[(connector, n)]) for n in range(count)]


class ConfigUpdateListener(Protocol):
    """What the distributed herder is told as the config topic changes.

    Called on the config topic's reader thread, one call at a time, after the
    change is in :meth:`ConfigTopicStore.snapshot`. A listener must return
    quickly and must not write to the store (the write's read-back would wait
    for the very thread it runs on); hand the work to the herder's thread.
    """

    def on_connector_config_update(self, connector: str) -> None: ...

    def on_connector_config_remove(self, connector: str) -> None: ...

    def on_task_config_update(self, tasks: list[TaskId]) -> None: ...

    def on_target_state_change(self, connector: str) -> None: ...

    def on_session_key_update(self, key: SessionKey) -> None: ...

    def on_restart_request(self, request: RestartRequest) -> None: ...


class ConfigTopicStore:
    """The config topic, read into memory and followed; writes for the leader.

    Lifecycle: construct -> optionally :meth:`set_listener` -> :meth:`start`
    (creates or checks the topic, reads it to the end; TopicStoreError on a
    topic that is not compacted or has more than one partition) ->
    :meth:`snapshot` / the put methods ... -> :meth:`stop`. Each put waits
    for the broker's acknowledgement and then reads the topic to its end, so
    the next :meth:`snapshot` shows it (read-your-writes).
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        *,
        replication_factor: int = -1,
        read_timeout_ms: int = 30000,
    ) -> None:
        settings = TopicSettings(
            name=topic,
            setting="config.storage.topic",
            purpose="connector configurations",
            partitions=1,
            replication_factor=replication_factor,
            partitions_required=1,
        )
        self._log = TopicLog(
            settings, client_config, self._consume, read_timeout_ms=read_timeout_ms
        )
        self._timeout_ms = read_timeout_ms
        self._lock = threading.Lock()
        self._listener: ConfigUpdateListener | None = None
        self._started = False
        self._offset = 0
        self._session_key: SessionKey | None = None
        self._connectors: dict[str, dict[str, str]] = {}
        self._target_states: dict[str, TargetState] = {}
        self._task_counts: dict[str, int] = {}
        self._task_configs: dict[TaskId, dict[str, str]] = {}
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}
        self._inconsistent: set[str] = set()

    @property
    def topic(self) -> str:
        return self._log.topic

    def set_listener(self, listener: ConfigUpdateListener | None) -> None:
        self._listener = listener

    def start(self) -> None:
        """Create or check the topic and read it to the end; then follow it."""
        self._log.start()
        self._started = True

    def stop(self) -> None:
        self._started = False
        self._log.stop()

    def refresh(self, timeout_ms: int | None = None) -> None:
        """Read the topic to its end (a leader does this before it acts on a snapshot)."""
        self._log.read_to_end(timeout_ms)

    def snapshot(self) -> ConfigSnapshot:
        """The configs read so far, as one immutable view."""
        with self._lock:
            return ConfigSnapshot(
                offset=self._offset,
                session_key=self._session_key,
                connectors={k: dict(v) for k, v in self._connectors.items()},
                target_states=dict(self._target_states),
                task_counts=dict(self._task_counts),
                task_configs={k: dict(v) for k, v in self._task_configs.items()},
                inconsistent=frozenset(self._inconsistent),
            )

    # -- the ConfigStore interface (what the standalone herder calls) ----------------------

    def load(self) -> list[StoredConnector]:
        """The connectors in the topic, with their target states (starts the store if needed)."""
        if not self._started:
            self.start()
        snapshot = self.snapshot()
        return [
            StoredConnector(name, config, snapshot.target_states.get(name, TargetState.RUNNING))
            for name, config in sorted(snapshot.connectors.items())
        ]

    def put(self, connector: StoredConnector) -> None:
        """Write ``connector``'s target state and config (the topic does not keep its source)."""
        self.put_connector_config(connector.name, connector.config, connector.target_state)

    def remove(self, name: str) -> None:
        self.remove_connector_config(name)

    # -- writes ----------------------------------------------------------------------------

    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        """Create or update ``connector``; a ``target_state`` is written first (initial state)."""
        records: list[tuple[bytes, bytes | None]] = []
        if target_state is not None:
            records.append((rec.target_state_key(connector), rec.target_state_value(target_state)))
        records.append((rec.connector_key(connector), rec.config_value(dict(config))))
        self._write(records, f"writing the config of connector {connector!r}")

    def remove_connector_config(self, connector: str) -> None:
        """Delete ``connector``: tombstones for its config and its target state."""
        records = [(rec.connector_key(connector), None), (rec.target_state_key(connector), None)]
        self._write(records, f"removing connector {connector!r}")

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Publish ``connector``'s task configs: one record per task, then the commit record."""
        self.refresh()
        records: list[tuple[bytes, bytes | None]] = [
            (rec.task_key(connector, n), rec.config_value(dict(c))) for n, c in enumerate(configs)
        ]
        records.append((rec.commit_key(connector), rec.commit_value(len(configs))))
        self._write(records, f"writing the task configs of connector {connector!r}")

    def put_target_state(self, connector: str, state: TargetState) -> None:
        """Pause, resume or stop ``connector`` (every worker running it follows)."""
        records = [(rec.target_state_key(connector), rec.target_state_value(state))]
        self._write(records, f"writing the target state of connector {connector!r}")

    def put_session_key(self, key: SessionKey) -> None:
        """Distribute a new key for signing internal requests (the leader, KIP-507)."""
        records = [(rec.session_key_key(), rec.session_key_value(key))]
        self._write(records, "writing the session key")

    def put_restart_request(self, request: RestartRequest) -> None:
        """Ask the leader, through the topic, to restart a connector (and its tasks)."""
        records = [(rec.restart_key(request.connector), rec.restart_value(request))]
        self._write(records, f"writing a restart request for connector {request.connector!r}")

    def _write(self, records: Sequence[tuple[bytes, bytes | None]], what: str) -> None:
        self._log.check_not_reader_thread(what)  # before sending: all or nothing
        try:
            futures = [self._log.send(key, value, partition=0) for key, value in records]
            for future in futures:
                future.result(self._timeout_ms / 1000)
        except TopicStoreError:
            raise
        except Exception as exc:
            raise TopicStoreError(f"{what} to topic {self.topic!r} failed: {exc}") from exc
        self.refresh()

    # -- reading ---------------------------------------------------------------------------

    def _consume(self, record: ConsumerRecord) -> None:
        try:
            parsed = rec.parse(record.key, record.value)
        except rec.BadConfigRecord as exc:
            log.error(
                "skipping config record at offset %d of topic %s: %s",
                record.offset,
                record.topic,
                exc,
            )
            parsed = None
        with self._lock:
            self._offset = record.offset + 1
            notify = None if parsed is None else self._apply(parsed)
        if notify is not None and self._started and self._listener is not None:
            try:
                notify(self._listener)
            except Exception:
                log.exception(
                    "the config listener failed on the record at offset %d of topic %s",
                    record.offset,
                    record.topic,
                )

    def _apply(self, parsed: rec.ConfigRecord) -> Any:
        """Apply ``parsed`` under the lock; a callable telling the listener, if any."""
        match parsed:
            case rec.ConnectorConfigRecord(connector, None):
                self._forget(connector)
                return lambda lis: lis.on_connector_config_remove(connector)
            case rec.ConnectorConfigRecord(connector, config):
                assert config is not None
                self._connectors[connector] = config
                self._target_states.setdefault(connector, TargetState.RUNNING)
                return lambda lis: lis.on_connector_config_update(connector)
            case rec.TaskConfigRecord(connector, task, config):
                if config is None:
                    log.error("ignoring a null config for task %s-%d", connector, task)
                    return None
                self._deferred.setdefault(connector, {})[task] = config
                return None
            case rec.CommitRecord(connector, tasks):
                updated = self._commit(connector, tasks)
                return None if updated is None else lambda lis: lis.on_task_config_update(updated)
            case rec.TargetStateRecord(connector, state):
                return self._set_target_state(connector, state)
            case rec.SessionKeyRecord(key):
                self._session_key = key
                return None if key is None else lambda lis: lis.on_session_key_update(key)
            case rec.RestartRequest():
                request = parsed
                return lambda lis: lis.on_restart_request(request)
        return None  # IgnoredRecord

    def _forget(self, connector: str) -> None:
        self._connectors.pop(connector, None)
        self._task_counts.pop(connector, None)
        self._deferred.pop(connector, None)
        self._inconsistent.discard(connector)
        for task_id in [t for t in self._task_configs if t[0] == connector]:
            del self._task_configs[task_id]

    def _commit(self, connector: str, tasks: int) -> list[TaskId] | None:
        """Apply the deferred task configs if they are complete; the updated task ids."""
        if connector not in self._connectors:
            log.debug("ignoring task configs of deleted connector %s", connector)
            self._forget(connector)
            return None
        deferred = self._deferred.pop(connector, {})
        if not all(n in deferred for n in range(tasks)):
            log.warning(
                "connector %s: commit of %d tasks found configs for tasks %s only; "
                "its task configs are inconsistent until they are written again",
                connector,
                tasks,
                sorted(deferred),
            )
            self._inconsistent.add(connector)
            self._task_counts[connector] = tasks
            return []
        for task_id in [t for t in self._task_configs if t[0] == connector and t[1] >= tasks]:
            del self._task_configs[task_id]
        for n, config in deferred.items():
            self._task_configs[(connector, n)] = config
        self._inconsistent.discard(connector)
        self._task_counts[connector] = tasks
        return [(connector, n) for n in sorted(deferred)]

    def _set_target_state(self, connector: str, state: TargetState | None) -> Any:
        if state is None:
            self._target_states.pop(connector, None)
            if connector in self._connectors:
                self._target_states[connector] = TargetState.RUNNING
            return None
        previous = self._target_states.get(connector)
        self._target_states[connector] = state
        if state is previous or connector not in self._connectors:
            return None
        return lambda lis: lis.on_target_state_change(connector)
