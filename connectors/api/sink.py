"""Sink connectors and tasks: receive SinkRecords, write an external system.

Task lifecycle (the runtime owns the loop, one thread per task)::

    initialize(context) -> start(props) -> open(partitions)
        -> put(records) ... -> pre_commit(offsets) -> ... -> close(partitions) -> stop()

- ``put(records)`` hands records over; it may buffer them. Raise DataError for
  one bad record's batch only if it cannot be isolated, RetriableError to have
  the same batch redelivered after a backoff, ConnectError to fail the task.
- ``pre_commit(offsets)`` (default: ``flush(offsets)`` then return them) must
  make everything up to ``offsets`` (the next offset to read, per partition)
  durable; the runtime commits the returned offsets to the consumer group only
  after it returns. A sink that stores offsets with its data returns ``{}``
  and seeks on ``open`` through ``context.offset(...)`` (exactly-once).
- ``open``/``close`` bracket the partitions assigned to this task (rebalances).
- ``context.pause``/``resume`` apply back-pressure per partition.
- ``on_pause``/``on_resume`` (optional) tell the task, in its own thread, that
  the connector was paused or resumed (the runtime then stops or restarts
  ``put``). Only a task that works by itself needs them: SparkSink stops
  its streaming query on pause and starts it again on resume.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Protocol

from connectors.api.connector import Connector
from connectors.api.records import SinkRecord, TopicPartition
from connectors.api.task import Task, TaskContext


class SinkTaskContext(TaskContext, Protocol):
    """What a sink task may ask of the runtime."""

    def assignment(self) -> set[TopicPartition]: ...

    def pause(self, *partitions: TopicPartition) -> None: ...

    def resume(self, *partitions: TopicPartition) -> None: ...

    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Rewind/advance consumption: the next record read is at ``offsets``."""

    def request_commit(self) -> None: ...


class SinkConnector(Connector):
    """A connector whose tasks write records from the log into an external system."""


class SinkTask(Task[SinkTaskContext]):
    """One thread of a sink connector's work."""

    @abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Open connections to the target system."""

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        """These partitions are now assigned to this task."""

    @abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) ``records``."""

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Make everything up to ``offsets`` durable."""

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Flush and return the offsets safe to commit (default: ``offsets``)."""
        self.flush(offsets)
        return dict(offsets)

    def close(self, partitions: Sequence[TopicPartition]) -> None:
        """These partitions are no longer assigned; drop their buffers."""

    def on_pause(self) -> None:
        """The connector was paused: no ``put`` until :meth:`on_resume`; stop own work."""

    def on_resume(self) -> None:
        """The connector was resumed after :meth:`on_pause`."""

    @abstractmethod
    def stop(self) -> None:
        """Release resources; called after the last put/flush."""
