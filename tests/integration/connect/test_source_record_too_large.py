"""A source record the broker refuses as too large, among others sent in one run.

The producer splits the refused batch and only that record fails; the
runtime must hand exactly that record to the error handling, and count the
records around it as delivered: under ``errors.tolerance=all`` it is skipped
and everything else lands once, with the offsets committed past it; under
``none`` the task fails naming the reason.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping

from connect_worker.converters import ByteArrayConverter
from connect_worker.runtime.error_handling import ErrorHandler, ErrorSettings
from connect_worker.runtime.source_runner import SourceRunnerSettings, SourceTaskRunner
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.task_factory import PRODUCER_DEFAULTS
from connect_worker.storage.offsets import MemoryOffsetStore
from connectors.api import SourceRecord, SourceTask
from harness.broker_process import BrokerProcess
from harness.wait import wait_for
from log_engine.client import SyncConsumer, TopicPartition
from log_engine.client.admin_types import NewTopic
from log_engine.client.sync_admin import SyncAdmin
from tests.integration.connect.helpers import source_runner

COUNT = 300
BIG = 150  # the index of the record over the topic's max.message.bytes
PARTITION = {"source": "numbers"}


class _Numbers(SourceTask):
    """Returns COUNT records in one poll (record BIG is 30 kB), then nothing."""

    def __init__(self) -> None:
        self.done = threading.Event()

    def start(self, props: Mapping[str, str]) -> None:
        self.topic = props["topic"]

    def poll(self) -> list[SourceRecord]:
        if self.done.is_set():
            self.done.wait(0.05)
            return []
        self.done.set()
        return [
            SourceRecord(topic=self.topic, value=_value(n), source_partition=PARTITION,
                         source_offset={"n": n + 1})
            for n in range(COUNT)
        ]

    def stop(self) -> None:
        pass


def _value(n: int) -> bytes:
    return (b"%06d:" % n) + bytes(30_000 if n == BIG else 400)


def _topic(broker: BrokerProcess) -> str:
    name = f"too-large-{uuid.uuid4().hex[:8]}"
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topics([NewTopic(name, 1, 1, {"max.message.bytes": "20000"})])
    return name


def _runner(broker: BrokerProcess, topic: str, tolerance_all: bool,
            store: MemoryOffsetStore) -> tuple[SourceTaskRunner, ErrorHandler]:
    converter = ByteArrayConverter()
    converter.configure({}, False)
    task_id = TaskId("too-large", 0)
    errors = ErrorHandler(task_id, ErrorSettings(tolerance_all=tolerance_all))
    settings = SourceRunnerSettings(offset_flush_interval_ms=100)
    runner = source_runner(
        broker,
        _Numbers(),
        topic,
        task_id,
        settings,
        converter=converter,
        errors=errors,
        offsets=store,
        producer_config=PRODUCER_DEFAULTS,
    )
    return runner, errors


def _values(broker: BrokerProcess, topic: str) -> list[bytes | None]:
    consumer = SyncConsumer({"bootstrap.servers": broker.bootstrap})
    try:
        tp = TopicPartition(topic, 0)
        end = consumer.end_offsets([tp])[tp]
        consumer.assign([tp])
        consumer.seek_to_beginning()
        out: list[bytes | None] = []
        while len(out) < end:
            out.extend(r.value for r in consumer.poll(1.0))
        return out
    finally:
        consumer.close()


def _start(runner: SourceTaskRunner) -> tuple[threading.Thread, list[BaseException]]:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            runner.run(lambda: None)
        except BaseException as exc:  # the task's failure, as the worker would record it
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, failures


def test_tolerance_all_skips_only_the_record_too_large(broker: BrokerProcess) -> None:
    topic, store = _topic(broker), MemoryOffsetStore()
    runner, errors = _runner(broker, topic, True, store)
    thread, failures = _start(runner)
    try:
        wait_for(lambda: store.get("too-large", PARTITION) == {"n": COUNT},
                 "the offset past the last record")
    finally:
        runner.stop()
        thread.join(30)
    assert not failures
    assert errors.skipped == 1  # only the big record, not the ones split from its batch
    assert _values(broker, topic) == [_value(n) for n in range(COUNT) if n != BIG]


def test_tolerance_none_fails_the_task_naming_the_record_too_large(
    broker: BrokerProcess,
) -> None:
    topic, store = _topic(broker), MemoryOffsetStore()
    runner, _ = _runner(broker, topic, False, store)
    thread, failures = _start(runner)
    thread.join(60)
    assert not thread.is_alive()
    assert len(failures) == 1
    message = str(failures[0])
    assert f"the log did not accept a record for topic {topic!r}" in message
    assert "MESSAGE_TOO_LARGE" in message and "max.message.bytes=20000" in message
    landed = _values(broker, topic)
    assert _value(BIG) not in landed
    assert landed[:BIG] == [_value(n) for n in range(BIG)]  # before it: each once, in order
    stored = store.get("too-large", PARTITION)
    assert stored is None or stored["n"] <= BIG  # never past the record that failed


