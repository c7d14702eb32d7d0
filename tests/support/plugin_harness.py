"""Test doubles of the runtime's side of the plugin API (our own interfaces)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from connectors.api import SourceRecord, SourceTask, TopicPartition


class DictOffsetReader:
    """An OffsetReader over a dict keyed by the partition's sorted items."""

    def __init__(self, stored: dict[tuple[tuple[str, Any], ...], dict[str, Any]] | None = None):
        self.stored = stored if stored is not None else {}

    @staticmethod
    def key(partition: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
        return tuple(sorted(partition.items()))

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.stored.get(self.key(partition))

    def offsets(
        self, partitions: Sequence[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]

    def commit(self, records: Sequence[SourceRecord]) -> None:
        """Store the last offset of each partition, as the runtime does after an ack."""
        for record in records:
            assert record.source_partition is not None and record.source_offset is not None
            self.stored[self.key(record.source_partition)] = dict(record.source_offset)


class SourceContext:
    """A SourceTaskContext with a dict-backed offset reader."""

    def __init__(
        self, reader: DictOffsetReader, task_id: int = 0, bootstrap_servers: str = ""
    ) -> None:
        self._reader = reader
        self._task_id = task_id
        self.bootstrap_servers = bootstrap_servers

    @property
    def offset_reader(self) -> DictOffsetReader:
        return self._reader

    @property
    def task_id(self) -> int:
        return self._task_id


class SinkContext:
    """A SinkTaskContext that records what the task asked for."""

    def __init__(
        self, partitions: set[TopicPartition] | None = None, bootstrap_servers: str = ""
    ) -> None:
        self.partitions = partitions or set()
        self.bootstrap_servers = bootstrap_servers
        self.paused: set[TopicPartition] = set()
        self.rewinds: dict[TopicPartition, int] = {}
        self.commits_requested = 0

    @property
    def task_id(self) -> int:
        return 0

    def assignment(self) -> set[TopicPartition]:
        return set(self.partitions)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.rewinds.update(offsets)

    def request_commit(self) -> None:
        self.commits_requested += 1


def drain(task: SourceTask, want: int, max_polls: int = 200) -> list[SourceRecord]:
    """Poll until ``want`` records came (or ``max_polls`` polls); bounded, never hangs."""
    records: list[SourceRecord] = []
    for _ in range(max_polls):
        if len(records) >= want:
            break
        records.extend(task.poll())
    return records
