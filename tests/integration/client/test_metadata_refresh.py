"""The client's metadata refresher asks again soon once any refresh finds a topic missing.

On a cluster the brokers learn of a new topic one after another. A client whose
metadata was complete (every topic of interest there) waits ``metadata.max.age.ms``
(5 minutes by default) before its next periodic refresh. If another refresh (a
group leader's, before it assigns partitions) then asks a broker that has not
learnt of the topic yet, the topic is missing from the metadata; the refresher
must notice and ask again within a second, or a consumer group's leader assigns
the topic as 0 partitions for 5 minutes (a Connect sink on the 3-node cluster got
nothing for 60 s under load: tests/e2e/test_distributed_on_cluster.py).

Here one broker plays both: the topic is deleted, an explicit refresh sees it
missing, and it is created again; the refresher alone must find it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from harness.broker_process import BrokerProcess
from log_engine.client import Admin, Cluster
from log_engine.client.config import ClientConfig

TOPIC = "comes-back"
GIVE_UP_S = 30  # the test's own; the max age the refresher must not wait is 300 s


async def _scenario(bootstrap: str) -> int:
    async with Admin({"bootstrap.servers": bootstrap}) as admin:
        await admin.create_topic(TOPIC, 2)
        cluster = Cluster(ClientConfig.from_mapping({"bootstrap.servers": bootstrap}))
        try:
            cluster.add_topics([TOPIC])
            await cluster.bootstrap()  # complete: the refresher now waits the max age
            assert len(cluster.metadata.topics[TOPIC].partitions) == 2
            await admin.delete_topics([TOPIC])
            await cluster.refresh()  # another task's refresh finds the topic missing
            assert not cluster.metadata.topics[TOPIC].partitions
            await admin.create_topic(TOPIC, 3)
            for _ in range(GIVE_UP_S * 10):
                if len(cluster.metadata.topics[TOPIC].partitions) == 3:
                    break
                await asyncio.sleep(0.1)
            return len(cluster.metadata.topics[TOPIC].partitions)
        finally:
            await cluster.close()


def test_the_refresher_asks_again_soon_once_a_refresh_found_a_topic_missing(
    tmp_path: Path,
) -> None:
    broker = BrokerProcess(tmp_path / "data", **{"auto.create.topics.enable": "false"}).start()
    try:
        partitions = asyncio.run(_scenario(broker.bootstrap))
        assert partitions == 3, f"the topic created again not seen after {GIVE_UP_S} s"
    finally:
        broker.stop()
