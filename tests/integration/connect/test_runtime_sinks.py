"""Sink specifics: topics.regex, pausing a sink, seeks through the task's context."""

from __future__ import annotations

from collections.abc import Callable

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State, TargetState
from harness.wait import wait_for
from tests.integration.connect import plugins
from tests.integration.connect.helpers import task_state
from tests.integration.connect.plugins import sink_config, sink_values, source_config

MakeHerder = Callable[..., StandaloneHerder]


def test_topics_regex_reads_every_matching_topic(make_herder: MakeHerder, topic_name: str) -> None:
    herder = make_herder()
    for suffix in ("a", "b"):
        herder.put_connector_config(
            f"{topic_name}-src-{suffix}",
            source_config(f"{topic_name}-{suffix}", 10),
            allow_replace=False,
        )
    for suffix in ("a", "b"):
        wait_for(
            lambda s=suffix: herder.connector_offsets(f"{topic_name}-src-{s}"),
            f"source {suffix}",
        )
    sink = f"{topic_name}-sink"
    herder.put_connector_config(
        sink,
        {"connector.class": "MemorySink", "topics.regex": f"{topic_name}-[ab]"},
        allow_replace=False,
    )
    wait_for(lambda: len(sink_values(sink)) >= 20, "records of both topics")
    assert sorted(sink_values(sink)) == sorted([f"v-{n}" for n in range(10)] * 2)
    assert herder.connector_topics(sink) == [f"{topic_name}-a", f"{topic_name}-b"]


def test_a_paused_sink_takes_nothing_until_resumed(
    make_herder: MakeHerder, topic_name: str
) -> None:
    herder = make_herder()
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(src, source_config(topic_name, 10), allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 10, "the first records")
    herder.set_target_state(sink, TargetState.PAUSED)
    assert task_state(herder, sink) is State.PAUSED
    puts_before = len(plugins.SINKS[sink].puts)
    herder.put_connector_config(src, source_config(topic_name, 30), allow_replace=True)
    wait_for(
        lambda: herder.connector_offsets(src)[0]["offset"]["n"] == 30, "the source to write more"
    )
    assert len(sink_values(sink)) == 10 and len(plugins.SINKS[sink].puts) == puts_before
    herder.set_target_state(sink, TargetState.RUNNING)
    wait_for(lambda: len(sink_values(sink)) >= 30, "the records written while paused")
    assert sink_values(sink) == [f"v-{n}" for n in range(30)]


def test_a_sink_may_seek_through_its_context(make_herder: MakeHerder, topic_name: str) -> None:
    herder = make_herder()
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder.put_connector_config(src, source_config(topic_name, 10), allow_replace=False)
    wait_for(lambda: herder.connector_offsets(src), "the source")
    herder.put_connector_config(
        sink,
        sink_config(topic_name, **{"seek.on.open": "7"}),
        allow_replace=False,
    )
    wait_for(lambda: len(sink_values(sink)) >= 3, "records from offset 7")
    assert sink_values(sink) == ["v-7", "v-8", "v-9"]
    wait_for(
        lambda: (
            herder.connector_offsets(sink)
            and herder.connector_offsets(sink)[0]["offset"]["kafka_offset"] == 10
        ),
        "the commit after the seek",
    )
