"""Topics on this broker: creation, deletion, partition counts and configs.

A topic is its partition directories in the log manager (``<topic>-<n>``), so
the set of topics needs no separate metadata file on a single node; per-topic
config overrides are persisted by the log manager. Cluster metadata moves to
the controller's replicated log with replication.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from log_engine.broker.partition import Partition
from log_engine.errors import KafkaStorageError
from log_engine.metadata.types import NO_LEADER, PartitionState
from log_engine.storage.config import LogConfig
from log_engine.storage.log_manager import LogManager

OFFSETS_TOPIC = "__consumer_offsets"
_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
_MAX_NAME_LENGTH = 249


class TopicError(Exception):
    """A topic operation failed; carries the Kafka error code to answer with."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """What CreateTopics asks for, after defaults are applied."""

    name: str
    num_partitions: int
    replication_factor: int
    configs: dict[str, str]


def validate_topic_name(name: str) -> None:
    """Kafka's rule: 1-249 characters of [a-zA-Z0-9._-], not '.' or '..'."""
    if not name or name in (".", "..") or len(name) > _MAX_NAME_LENGTH:
        raise TopicError(17, f"invalid topic name {name!r}")
    if not _LEGAL_NAME.match(name):
        raise TopicError(17, f"topic name {name!r} has characters outside [a-zA-Z0-9._-]")


class TopicManager:
    """The broker's topics and their partitions, backed by one log directory."""

    def __init__(self, logs: LogManager, cluster_size: int = 1) -> None:
        self.logs = logs
        self._cluster_size = cluster_size
        self._partitions: dict[str, list[Partition]] = {}
        for (topic, index), log in sorted(logs.partitions().items()):
            self._partitions.setdefault(topic, []).append(Partition(topic, index, log))
        for topic, partitions in self._partitions.items():
            expected = list(range(len(partitions)))
            if [p.index for p in partitions] != expected:
                raise TopicError(56, f"topic {topic} has a gap in its partition directories")

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count."""
        return {name: len(parts) for name, parts in self._partitions.items()}

    def partitions(self, topic: str) -> list[Partition]:
        return self._partitions.get(topic, [])

    def partition(self, topic: str, index: int) -> Partition | None:
        parts = self._partitions.get(topic)
        if parts is None or not 0 <= index < len(parts):
            return None
        return parts[index]

    def exists(self, topic: str) -> bool:
        return topic in self._partitions

    def check_create(self, spec: TopicSpec) -> None:
        """Validate a CreateTopics entry without creating anything."""
        validate_topic_name(spec.name)
        if spec.name in self._partitions:
            raise TopicError(36, f"topic {spec.name!r} already exists")
        if spec.num_partitions < 1:
            raise TopicError(
                37, f"number of partitions must be at least 1, got {spec.num_partitions}"
            )
        if spec.replication_factor < 1 or spec.replication_factor > self._cluster_size:
            raise TopicError(
                38,
                f"replication factor {spec.replication_factor} is outside 1.."
                f"{self._cluster_size} (brokers in the cluster)",
            )
        self._check_configs(spec.configs)

    def _check_configs(self, configs: dict[str, str]) -> None:
        try:
            LogConfig.from_properties(configs)
        except ValueError as exc:
            raise TopicError(40, f"invalid topic config: {exc}") from None

    def create(self, spec: TopicSpec) -> list[Partition]:
        """Create a topic's partitions (after :meth:`check_create`)."""
        self.check_create(spec)
        try:
            if spec.configs:
                self.logs.set_topic_overrides(spec.name, spec.configs)
            partitions = [
                Partition(spec.name, i, self.logs.get_or_create(spec.name, i))
                for i in range(spec.num_partitions)
            ]
        except (KafkaStorageError, OSError) as exc:
            raise TopicError(56, f"cannot create topic {spec.name!r}: {exc}") from exc
        self._partitions[spec.name] = partitions
        return partitions

    def delete(self, topic: str) -> None:
        if topic not in self._partitions:
            raise TopicError(3, f"topic {topic!r} does not exist")
        for partition in self._partitions.pop(topic):
            self.logs.delete_partition(topic, partition.index)

    def add_partitions(self, topic: str, count: int, validate_only: bool = False) -> None:
        """Grow a topic to ``count`` partitions (CreatePartitions; never shrinks)."""
        current = self._partitions.get(topic)
        if current is None:
            raise TopicError(3, f"topic {topic!r} does not exist")
        if count <= len(current):
            raise TopicError(
                37, f"topic {topic!r} has {len(current)} partitions; {count} would not add any"
            )
        if validate_only:
            return
        for index in range(len(current), count):
            current.append(Partition(topic, index, self.logs.get_or_create(topic, index)))

    def ensure_partition(self, topic: str, index: int) -> Partition:
        """The partition, creating its log (and any lower missing ones) if needed.

        The replica manager calls this when the controller assigns a replica
        here. Partitions created only to fill a gap below ``index`` get a
        leaderless state, so they refuse produce and fetch until a state
        names this broker.
        """
        current = self._partitions.setdefault(topic, [])
        for missing in range(len(current), index + 1):
            try:
                created = Partition(topic, missing, self.logs.get_or_create(topic, missing))
            except (KafkaStorageError, OSError) as exc:
                raise TopicError(56, f"cannot create {topic}-{missing}: {exc}") from exc
            if missing != index:
                created.state = PartitionState(topic, missing, NO_LEADER, -1, -1, (), ())
            current.append(created)
        return current[index]

    def update_configs(self, topic: str, configs: dict[str, str]) -> None:
        """Replace a topic's config overrides (validated first)."""
        self._check_configs(configs)
        try:
            self.logs.set_topic_overrides(topic, configs)
        except KafkaStorageError as exc:
            raise TopicError(56, exc.detail) from exc
        for partition in self._partitions.get(topic, []):
            partition.log.update_config(self.logs.topic_config(topic))
