"""Source batches sent in one call: per-record hooks, offsets and ordering stay per record."""

from __future__ import annotations

from collections.abc import Callable

from connect_worker.herder.standalone import StandaloneHerder
from tests.integration.connect import plugins
from tests.integration.connect.helpers import wait_for

MakeHerder = Callable[..., StandaloneHerder]


def _values(name: str) -> list[str]:
    log = plugins.SINKS.get(name)
    if log is None:
        return []
    with log.lock:
        return list(log.values)


def test_commit_record_sees_every_record_in_order_and_offsets_follow(
    make_herder: MakeHerder, topic_name: str
) -> None:
    herder = make_herder()
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder.put_connector_config(
        sink, {"connector.class": "MemorySink", "topics": topic_name}, allow_replace=False
    )
    herder.put_connector_config(
        src,
        {"connector.class": "AckingSequenceSource", "topic": topic_name, "count": "3000",
         "batch": "700"},
        allow_replace=False,
    )
    expected = [f"v-{n}" for n in range(3000)]
    wait_for(lambda: len(plugins.SOURCE_RECORD_ACKS.get(src, [])) >= 3000, "3000 record acks")
    assert plugins.SOURCE_RECORD_ACKS[src] == expected
    wait_for(lambda: len(_values(sink)) >= 3000, "3000 records in the sink")
    assert sorted(_values(sink), key=lambda v: int(v[2:])) == expected  # keys may spread them
    wait_for(
        lambda: herder.connector_offsets(src)
        == [{"partition": {"sequence": src}, "offset": {"n": 3000}}],
        "the source offset after the last batch",
    )
