"""A clean stop commits before it stops: the task's last ``commit()`` runs while it is open.

A source that acknowledges upstream in ``commit()`` (MQTT, PostgreSQL CDC)
closes its connection in ``stop()``; if ``stop()`` came first, the last
records' acknowledgements would go to a closed connection and the upstream
would deliver them again after a restart.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from connect_worker.runtime.source_runner import SourceRunnerSettings, SourceTaskRunner
from connect_worker.runtime.status import TaskId
from connectors.api import SourceRecord, SourceTask
from harness.broker_process import BrokerProcess
from harness.wait import wait_for
from tests.integration.connect.helpers import source_runner


class _AckingUpstream(SourceTask):
    """Polls numbered records forever; ``commit()`` acks all polled so far, if still open."""

    def __init__(self, *, block_until_stopped: bool = False) -> None:
        self.block_until_stopped = block_until_stopped
        self.lock = threading.Lock()
        self.polled = 0
        self.acked = 0
        self.open = True
        self.stopped = threading.Event()
        self.blocking = threading.Event()  # poll() is inside its endless wait

    def start(self, props: Mapping[str, str]) -> None:
        self.topic = props["topic"]

    def poll(self) -> list[SourceRecord]:
        if self.block_until_stopped and self.polled >= 50:
            self.blocking.set()
            self.stopped.wait()  # ignores the runtime's stop until stop() is called
            return []
        with self.lock:
            first, self.polled = self.polled, self.polled + 10
        self.stopped.wait(0.01)
        return [
            SourceRecord(topic=self.topic, value=f"m{n}", source_partition={"p": 1},
                         source_offset={"n": n + 1})
            for n in range(first, first + 10)
        ]

    def commit(self) -> None:
        with self.lock:
            if self.open:
                self.acked = self.polled

    def stop(self) -> None:
        with self.lock:
            self.open = False
        self.stopped.set()


def _runner(broker: BrokerProcess, task: SourceTask, topic: str) -> SourceTaskRunner:
    settings = SourceRunnerSettings(offset_flush_interval_ms=60_000)
    return source_runner(broker, task, topic, TaskId("stop-order", 0), settings)


def _run_then_stop(runner: SourceTaskRunner, task: _AckingUpstream) -> None:
    thread = threading.Thread(target=runner.run, args=(lambda: None,))
    thread.start()
    try:
        # With a blocking poll, stop only once poll() blocks: stopped between two polls,
        # the runner would make its final commit (acking all 50) before stop().
        wait_for(lambda: task.blocking.is_set() if task.block_until_stopped
                 else task.polled >= 100, "records polled")
    finally:
        runner.stop()
        thread.join(30)
    assert not thread.is_alive()
    assert task.stopped.is_set()


def test_a_clean_stop_acks_every_polled_record_before_the_task_stops(
    broker: BrokerProcess, topic_name: str
) -> None:
    task = _AckingUpstream()
    _run_then_stop(_runner(broker, task, topic_name), task)
    # No periodic commit ran (60 s interval): only the final one, before stop(), acked.
    assert task.polled >= 100
    assert task.acked == task.polled


def test_a_poll_that_blocks_until_stopped_still_stops(
    broker: BrokerProcess, topic_name: str
) -> None:
    task = _AckingUpstream(block_until_stopped=True)
    _run_then_stop(_runner(broker, task, topic_name), task)
    # stop() came first (after the grace period) to unblock poll(): the final
    # commit found the upstream closed, so the last records are acked after a restart.
    assert task.polled == 50
    assert task.acked < task.polled
