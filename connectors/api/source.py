"""Source connectors and tasks: read an external system, return SourceRecords.

Task lifecycle (the runtime owns the loop, one thread per task)::

    initialize(context) -> start(props) -> poll() ... poll() -> stop()
                                    \\-> commit() after offsets were stored

- ``poll()`` returns a list of records, or ``[]`` when nothing is ready; it may
  block, but should return within about a second so the task can be paused or
  stopped. Raise RetriableError for transient trouble (the runtime backs off
  and polls again), ConnectError to fail the task.
- Offsets: each record carries ``source_partition``/``source_offset``; the
  runtime writes them only after the log acknowledged the record, and calls
  ``commit()`` after they are durable (e.g. to acknowledge upstream).
  ``commit_record(record)`` is called per acknowledged record. A task never
  writes offsets itself; on start it reads them through ``context.offset_reader``.
- ``stop()`` is called from another thread and must make a blocked ``poll()``
  return soon.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from connectors.api.connector import Connector
from connectors.api.records import SourceRecord
from connectors.api.task import Task, TaskContext


class OffsetReader(Protocol):
    """Read the offsets the runtime stored for this connector's source partitions."""

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None: ...

    def offsets(
        self, partitions: Sequence[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]: ...


class SourceTaskContext(TaskContext, Protocol):
    """What a source task may ask of the runtime."""

    @property
    def offset_reader(self) -> OffsetReader: ...


class SourceConnector(Connector):
    """A connector whose tasks read from an external system into the log."""


class SourceTask(Task[SourceTaskContext]):
    """One thread of a source connector's work."""

    @abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Open the source and seek to the stored offsets."""

    @abstractmethod
    def poll(self) -> list[SourceRecord]:
        """Return the next records (``[]`` when none are ready)."""

    def commit(self) -> None:
        """Offsets of everything acknowledged so far are durable.

        The place to acknowledge upstream. On a clean stop it is called one last
        time before :meth:`stop` (once ``poll`` has returned), so the connection
        it acknowledges on is still open.
        """

    def commit_record(self, record: SourceRecord) -> None:
        """``record`` was acknowledged by the log."""

    @abstractmethod
    def stop(self) -> None:
        """Stop; make ``poll`` return. Usually called after the final :meth:`commit`, in the
        task's thread; from another thread when ``poll`` has not returned within a
        second of the stop request (it must then unblock it)."""
