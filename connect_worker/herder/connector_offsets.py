"""Reading, altering and resetting a connector's offsets (REST ``/connectors/{c}/offsets``).

Shapes as Kafka Connect's::

    source: {"partition": {<the connector's partition>}, "offset": {<its offset>} | null}
    sink:   {"partition": {"kafka_topic": "t", "kafka_partition": 0},
             "offset": {"kafka_offset": 42} | null}

Source offsets live in the worker's :class:`OffsetStore`; a sink's are its
consumer group's (``connect-<connector>``) committed offsets, changed through
the admin client. A null offset deletes a source offset; for a sink it moves
the group to the partition's earliest offset (our client cannot delete a
group's offsets, and the sink's consumer starts from the earliest offset
when it has none, so the effect is the same). Altering and resetting need the
connector STOPPED; the herder checks that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connect_worker.herder.api import BadRequestError
from connect_worker.runtime.task_factory import group_id
from connect_worker.states import ConnectorType
from connect_worker.storage.offsets import OffsetStore, partition_key, partition_of
from log_engine.client import SyncAdmin, TopicPartition


class ConnectorOffsets:
    """Offsets of connectors of either type (see the module doc); thread-safe."""

    def __init__(self, store: OffsetStore, admin: Callable[[], SyncAdmin]) -> None:
        self._store = store
        self._admin = admin

    def read(self, name: str, kind: ConnectorType) -> list[dict[str, Any]]:
        if kind is ConnectorType.SINK:
            committed = self._admin().list_consumer_group_offsets(group_id(name))
            return [
                {
                    "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                    "offset": {"kafka_offset": meta.offset},
                }
                for tp, meta in sorted(committed.items())
            ]
        return [
            {"partition": partition_of(key), "offset": offset}
            for key, offset in sorted(self._store.get_all(name).items())
        ]

    def alter(self, name: str, kind: ConnectorType, offsets: list[dict[str, Any]]) -> None:
        """Apply ``offsets`` (BadRequestError lists every malformed entry)."""
        if kind is ConnectorType.SINK:
            self._alter_sink(name, offsets)
        else:
            self._alter_source(name, offsets)

    def reset(self, name: str, kind: ConnectorType) -> None:
        """Forget every offset of the connector."""
        if kind is ConnectorType.SINK:
            admin = self._admin()
            committed = admin.list_consumer_group_offsets(group_id(name))
            if committed:
                admin.reset_consumer_group_offsets(group_id(name), committed, "earliest")
            return
        keys = self._store.get_all(name)
        if keys:
            self._store.put_all(name, dict.fromkeys(keys))
            self._store.flush()

    def _alter_source(self, name: str, offsets: list[dict[str, Any]]) -> None:
        changes: dict[str, dict[str, Any] | None] = {}
        problems = []
        for index, entry in enumerate(_entries(offsets)):
            partition, offset = entry.get("partition"), entry.get("offset")
            if not isinstance(partition, dict) or not partition:
                problems.append(f"offsets[{index}].partition: must be a non-empty JSON object")
            elif offset is not None and not isinstance(offset, dict):
                problems.append(f"offsets[{index}].offset: must be a JSON object or null")
            else:
                changes[partition_key(partition)] = offset
        if problems:
            raise BadRequestError("; ".join(problems))
        self._store.put_all(name, changes)
        self._store.flush()

    def _alter_sink(self, name: str, offsets: list[dict[str, Any]]) -> None:
        to_set: dict[TopicPartition, int] = {}
        to_reset: list[TopicPartition] = []
        problems = []
        for index, entry in enumerate(_entries(offsets)):
            partition, offset = entry.get("partition") or {}, entry.get("offset")
            topic, number = partition.get("kafka_topic"), partition.get("kafka_partition")
            if (
                not isinstance(topic, str)
                or not topic
                or not isinstance(number, int)
                or (isinstance(number, bool) or number < 0)
            ):
                problems.append(
                    f"offsets[{index}].partition: needs kafka_topic (a string) and "
                    "kafka_partition (an integer >= 0)"
                )
                continue
            tp = TopicPartition(topic, number)
            if offset is None:
                to_reset.append(tp)
            elif (
                isinstance(offset, dict)
                and _is_int(offset.get("kafka_offset"))
                and (offset["kafka_offset"] >= 0)
            ):
                to_set[tp] = offset["kafka_offset"]
            else:
                problems.append(f"offsets[{index}].offset: needs kafka_offset (an integer >= 0)")
        if problems:
            raise BadRequestError("; ".join(problems))
        admin = self._admin()
        if to_set:
            admin.alter_consumer_group_offsets(group_id(name), to_set)
        if to_reset:
            admin.reset_consumer_group_offsets(group_id(name), to_reset, "earliest")


def _entries(offsets: Any) -> list[dict[str, Any]]:
    if not isinstance(offsets, list) or not all(isinstance(e, dict) for e in offsets):
        raise BadRequestError('offsets: expected a list of {"partition": ..., "offset": ...}')
    return offsets


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
