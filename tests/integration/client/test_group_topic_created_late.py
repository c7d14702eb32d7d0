"""A group consumer subscribed to a topic created only after it joined gets its records.

The group's leader assigned a topic that did not exist as 0 partitions. Once the
topic appears in the metadata (the client keeps asking for a missing topic), the
leader must rejoin so that the new partitions are assigned, and a poll already
waiting for data (with a long timeout, as a Java-style ``poll(Duration)`` loop
uses) must notice: nothing else would wake it before its timeout.

On one ``sluice broker`` and on the replicated 3-node cluster
(``harness.cluster.LocalCluster``, the topic at replication factor 3), where the
broker that answers the client's metadata may learn of the topic after another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.cluster import LocalCluster
from log_engine.client import Admin, Consumer, Producer

TOPIC = "created-late"
RECORDS = 10
# the test's own give-up time; the poll under test is asked to wait far longer
GIVE_UP_S = 60
POLL_TIMEOUT_MS = 600_000


@pytest.fixture(params=["one-broker", "three-node-cluster"])
def bootstrap_and_rf(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, int]]:
    if request.param == "one-broker":
        broker = BrokerProcess(tmp_path / "data", **{"auto.create.topics.enable": "false"})
        broker.start()
        try:
            yield broker.bootstrap, 1
        finally:
            broker.stop()
        return
    with LocalCluster(
        tmp_path / "brokers",
        **{
            "broker.session.timeout.ms": "3000",
            "broker.heartbeat.interval.ms": "500",
            "auto.create.topics.enable": "false",
        },
    ).running() as cluster:
        yield ",".join(node.bootstrap for node in cluster.nodes.values()), 3


async def _scenario(bootstrap: str, replication_factor: int) -> list[bytes | None]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "late", "auto.offset.reset": "earliest"}
    )
    try:
        consumer.subscribe([TOPIC])
        assert await consumer.poll(2000) == []  # joined: the topic is not there
        assert consumer.assignment() == set()
        waiting = asyncio.ensure_future(consumer.poll(POLL_TIMEOUT_MS))
        async with Admin({"bootstrap.servers": bootstrap}) as admin:
            await admin.create_topic(TOPIC, 1, replication_factor)
        async with Producer({"bootstrap.servers": bootstrap}) as producer:
            for i in range(RECORDS):
                await producer.send(TOPIC, f"v{i}".encode())
            await producer.flush()
        done, _ = await asyncio.wait([waiting], timeout=GIVE_UP_S)
        assert done, f"the waiting poll returned nothing {GIVE_UP_S} s after the topic appeared"
        values = [record.value for record in waiting.result()]
        while len(values) < RECORDS:
            values += [record.value for record in await consumer.poll(1000)]
        return values
    finally:
        await consumer.close()


def test_a_waiting_poll_gets_a_topic_created_after_the_join(
    bootstrap_and_rf: tuple[str, int],
) -> None:
    values = asyncio.run(_scenario(*bootstrap_and_rf))
    assert values == [f"v{i}".encode() for i in range(RECORDS)]
