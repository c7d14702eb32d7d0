"""Test-local plugins for the runtime tests: real SourceTask/SinkTask subclasses.

``SequenceSource`` writes ``<prefix>-<n>`` values with offsets ``{"n": n+1}`` and
resumes from its stored offset. ``MemorySink`` appends what it receives to
:data:`SINKS` (per connector name, surviving task restarts) and records what
``flush`` made durable. Knobs (``fail.*``) make tasks raise on purpose.
Shared state lives at module level because each restart makes new objects.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from connectors.api import (
    ConnectError,
    DataError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
    hookimpl,
)
from connectors.api.records import ConnectRecord
from transforms.api import Predicate, Transformation


@dataclass
class SinkLog:
    """What one sink connector's tasks saw, across restarts."""

    values: list[Any] = field(default_factory=list)
    puts: list[list[Any]] = field(default_factory=list)
    flushed: dict[TopicPartition, int] = field(default_factory=dict)
    opened: list[TopicPartition] = field(default_factory=list)
    closed: list[TopicPartition] = field(default_factory=list)
    put_failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


SINKS: dict[str, SinkLog] = {}


def source_config(topic: str, count: int = 100, **extra: str) -> dict[str, str]:
    """A SequenceSource writing ``count`` values to ``topic``."""
    return {"connector.class": "SequenceSource", "topic": topic, "count": str(count), **extra}


def sink_config(topic: str, **extra: str) -> dict[str, str]:
    """A MemorySink reading ``topic``."""
    return {"connector.class": "MemorySink", "topics": topic, **extra}


def sink_values(name: str) -> list[Any]:
    """The values sink connector ``name`` received so far (a copy)."""
    log = SINKS.get(name)
    if log is None:
        return []
    with log.lock:
        return list(log.values)


SOURCE_FAILURES: dict[str, int] = {}
SOURCE_COMMITS: dict[str, int] = {}


class SequenceSourceTask(SourceTask):
    def start(self, props: Mapping[str, str]) -> None:
        self.name = props["name"]
        self.topic = props["topic"]
        self.total = int(props.get("count", "100"))
        self.batch = int(props.get("batch", "10"))
        self.fail_times = int(props.get("fail.poll.times", "0"))
        self.bad_every = int(props.get("bad.every", "0"))
        self.partition = {"sequence": self.name}
        assert self.context is not None
        stored = self.context.offset_reader.offset(self.partition)
        self.next = stored["n"] if stored else 0
        self._stop = threading.Event()

    def poll(self) -> list[SourceRecord]:
        if SOURCE_FAILURES.get(self.name, 0) < self.fail_times:
            SOURCE_FAILURES[self.name] = SOURCE_FAILURES.get(self.name, 0) + 1
            raise ConnectError(f"planned failure {SOURCE_FAILURES[self.name]}")
        if self.next >= self.total:
            self._stop.wait(0.05)
            return []
        end = min(self.total, self.next + self.batch)
        records = [self._record(n) for n in range(self.next, end)]
        self.next = end
        return records

    def _record(self, n: int) -> SourceRecord:
        value: Any = f"v-{n}"
        if self.bad_every and n % self.bad_every == 0:
            value = {"bad": n}  # StringConverter refuses dicts? no: the transform below fails
        return SourceRecord(
            topic=self.topic,
            key=f"k-{n}",
            value=value,
            source_partition=self.partition,
            source_offset={"n": n + 1},
        )

    def commit(self) -> None:
        SOURCE_COMMITS[self.name] = SOURCE_COMMITS.get(self.name, 0) + 1

    def stop(self) -> None:
        self._stop.set()


SOURCE_RECORD_ACKS: dict[str, list[Any]] = {}


class AckingSequenceSourceTask(SequenceSourceTask):
    """Overrides ``commit_record``: sees each acknowledged record (as an MQTT source would)."""

    def commit_record(self, record: SourceRecord) -> None:
        SOURCE_RECORD_ACKS.setdefault(self.name, []).append(record.value)


class AckingSequenceSource(SourceConnector):
    aliases = ("AckingSequenceSource",)

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return AckingSequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]


class SequenceSource(SourceConnector):
    aliases = ("SequenceSource",)

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]


class MemorySinkTask(SinkTask):
    def start(self, props: Mapping[str, str]) -> None:
        self.name = props["name"]
        self.log = SINKS.setdefault(self.name, SinkLog())
        self.retriable_failures = int(props.get("fail.put.retriable", "0"))
        self.fatal_at = int(props.get("fail.put.fatal.at", "-1"))
        self.seek_on_open = props.get("seek.on.open")

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        with self.log.lock:
            self.log.opened.extend(partitions)
        if self.seek_on_open is not None and self.context is not None:
            self.context.offset({tp: int(self.seek_on_open) for tp in partitions})
            self.seek_on_open = None  # once per task instance, as a sink storing offsets would

    def put(self, records: Sequence[SinkRecord]) -> None:
        values = [r.value for r in records]
        with self.log.lock:
            self.log.puts.append(values)
            if self.log.put_failures < self.retriable_failures and records:
                self.log.put_failures += 1
                raise RetriableError("target busy")
            if 0 <= self.fatal_at < len(self.log.values) + len(values):
                self.fatal_at = -1
                raise ConnectError("target broke")
            self.log.values.extend(values)

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        with self.log.lock:
            self.log.flushed.update(offsets)

    def close(self, partitions: Sequence[TopicPartition]) -> None:
        with self.log.lock:
            self.log.closed.extend(partitions)

    def stop(self) -> None:
        pass


class MemorySink(SinkConnector):
    aliases = ("MemorySink",)

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return MemorySinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]


class RejectDicts(Transformation):
    """Raises DataError for records whose value is a dict (a 'bad record')."""

    aliases = ("RejectDicts",)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if isinstance(record.value, dict):
            raise DataError(f"cannot handle {record.value!r}")
        return record


class SlowStart(Transformation):
    """Sleeps in configure (a task that is slow to build)."""

    aliases = ("SlowStart",)

    def configure(self, props: Mapping[str, str]) -> None:
        time.sleep(float(props.get("seconds", "0")))

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return record


class ValueStartsWith(Predicate):
    aliases = ("ValueStartsWith",)

    def configure(self, props: Mapping[str, str]) -> None:
        self.prefix = props["prefix"]

    def test(self, record: ConnectRecord) -> bool:
        return isinstance(record.value, str) and record.value.startswith(self.prefix)


@hookimpl
def sluice_connectors() -> list[type]:
    return [SequenceSource, AckingSequenceSource, MemorySink]


@hookimpl
def sluice_transforms() -> list[type]:
    return [RejectDicts, SlowStart]


@hookimpl
def sluice_predicates() -> list[type]:
    return [ValueStartsWith]
