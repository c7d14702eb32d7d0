"""Source batches sent in one call: per-record hooks, offsets and ordering stay per record."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.runtime.source_runner import SourceRunnerSettings
from connect_worker.runtime.status import TaskId
from connect_worker.storage.offsets import MemoryOffsetStore
from connectors.api import SourceRecord, SourceTask
from harness.broker_process import BrokerProcess
from harness.wait import wait_for
from log_engine.client import SyncConsumer, TopicPartition
from tests.integration.connect import plugins
from tests.integration.connect.helpers import source_runner
from tests.integration.connect.plugins import sink_config, sink_values

MakeHerder = Callable[..., StandaloneHerder]


def test_commit_record_sees_every_record_in_order_and_offsets_follow(
    make_herder: MakeHerder, topic_name: str
) -> None:
    herder = make_herder()
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(
        src,
        {"connector.class": "AckingSequenceSource", "topic": topic_name, "count": "3000",
         "batch": "700"},
        allow_replace=False,
    )
    expected = [f"v-{n}" for n in range(3000)]
    wait_for(lambda: len(plugins.SOURCE_RECORD_ACKS.get(src, [])) >= 3000, "3000 record acks")
    assert plugins.SOURCE_RECORD_ACKS[src] == expected
    wait_for(lambda: len(sink_values(sink)) >= 3000, "3000 records in the sink")
    assert sorted(sink_values(sink), key=lambda v: int(v[2:])) == expected  # keys may spread them
    wait_for(
        lambda: herder.connector_offsets(src)
        == [{"partition": {"sequence": src}, "offset": {"n": 3000}}],
        "the source offset after the last batch",
    )


class _Batches(SourceTask):
    """Three polls of 20 records each (offsets {"n": 1..60}), then nothing."""

    def start(self, props: Mapping[str, str]) -> None:
        self.topic = props["topic"]
        self.polls = 0
        self.idle = threading.Event()

    def poll(self) -> list[SourceRecord]:
        if self.polls == 3:
            self.idle.wait(0.05)
            return []
        first = self.polls * 20
        self.polls += 1
        return [
            SourceRecord(
                topic=self.topic, value=f"r{n}", source_partition={"p": 1},
                source_offset={"n": n + 1},
            )
            for n in range(first, first + 20)
        ]

    def stop(self) -> None:
        self.idle.set()


def test_the_in_flight_bound_holds_for_batches_sent_together(
    broker: BrokerProcess, topic_name: str
) -> None:
    store = MemoryOffsetStore()
    settings = SourceRunnerSettings(offset_flush_interval_ms=50, max_in_flight_records=7)
    runner = source_runner(
        broker, _Batches(), topic_name, TaskId("bounded", 0), settings, offsets=store
    )
    peak = 0
    submit_many = runner.submitted.submit_many

    def watched(*args: Any) -> None:
        nonlocal peak
        submit_many(*args)
        peak = max(peak, runner.submitted.in_flight)

    runner.submitted.submit_many = watched  # type: ignore[method-assign]
    thread = threading.Thread(target=runner.run, args=(lambda: None,))
    thread.start()
    try:
        wait_for(lambda: store.get("bounded", {"p": 1}) == {"n": 60}, "offset after record 60")
    finally:
        runner.stop()
        thread.join(30)
    assert 0 < peak <= 7
    with SyncConsumer({"bootstrap.servers": broker.bootstrap}) as consumer:
        tp = TopicPartition(topic_name, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        values: list[bytes | None] = []
        for _ in range(100):
            values += [r.value for r in consumer.poll(0.5)]
            if len(values) >= 60:
                break
    assert values == [f"r{n}".encode() for n in range(60)]
