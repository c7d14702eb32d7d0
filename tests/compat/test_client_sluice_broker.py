"""Our client against a Sluice broker process: admin calls, round trips, groups, offsets.

The librdkafka mock cluster lacks the admin APIs (CreateTopics, DescribeConfigs,
ListGroups, ...), so they are exercised here against our own broker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from harness.broker_process import BrokerProcess
from log_engine.client import (
    Consumer,
    NewTopic,
    NoOffsetForPartitionError,
    OffsetAndMetadata,
    SyncAdmin,
    SyncConsumer,
    SyncProducer,
    TopicPartition,
)
from log_engine.client.admin import ConfigResource
from log_engine.errors import (
    OffsetOutOfRangeError,
    RequestTimedOutError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

pytestmark = pytest.mark.compat


def test_admin_topic_lifecycle(broker: BrokerProcess, topic_name: str) -> None:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topics([NewTopic(topic_name, 3, 1, {"retention.ms": "60000"})])
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topic(topic_name)
        admin.create_topic(topic_name, if_not_exists=True)
        assert topic_name in admin.list_topics()
        (description,) = admin.describe_topics([topic_name]).values()
        assert [p.partition for p in description.partitions] == [0, 1, 2]
        admin.create_partitions({topic_name: 4})
        assert len(admin.describe_topics([topic_name])[topic_name].partitions) == 4
        resource = ConfigResource("topic", topic_name)
        configs = admin.describe_configs([resource])[resource]
        assert configs["retention.ms"].value == "60000"
        assert admin.describe_cluster().brokers[0].port == broker.port
        admin.delete_topics([topic_name])
        assert topic_name not in admin.list_topics()
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.delete_topics([topic_name])
        admin.delete_topics([topic_name], if_exists=True)


def test_round_trip_with_offsets_and_record_deletion(
    broker: BrokerProcess, topic_name: str
) -> None:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic_name, 2)
        with SyncProducer({"bootstrap.servers": broker.bootstrap, "compression.type": "zstd"}) as p:
            futures = [p.send(topic_name, b"v%d" % i, key=b"k%d" % i) for i in range(100)]
            p.flush(30)
        delivered = [f.result(0) for f in futures]
        tp0 = TopicPartition(topic_name, 0)
        count0 = sum(1 for m in delivered if m.partition == 0)
        latest = admin.list_offsets({tp0: "latest"})
        assert latest[tp0][0] == count0
        assert admin.delete_records({tp0: 2}) == {tp0: 2}
        assert admin.list_offsets({tp0: "earliest"})[tp0][0] == 2
        by_time = admin.list_offsets({tp0: delivered[0].timestamp})
        assert by_time[tp0][0] >= 2

    consumer = SyncConsumer(
        {"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest"}
    )
    consumer.assign([tp0, TopicPartition(topic_name, 1)])
    records = []
    deadline = time.monotonic() + 30
    while len(records) < 98 and time.monotonic() < deadline:
        records += consumer.poll(1.0)
    assert consumer.position(tp0) == count0
    consumer.seek(tp0, 5)
    again = consumer.poll(5.0)
    consumer.close()
    assert sorted(r.value for r in records) == sorted(
        b"v%d" % i for i, m in enumerate(delivered) if m.partition == 1 or m.offset >= 2
    )
    assert again and again[0].offset == 5


def test_group_members_share_partitions_and_admin_sees_the_group(
    broker: BrokerProcess, topic_name: str
) -> None:
    group = f"g-{topic_name}"
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic_name, 4)

    async def scenario() -> tuple[set[TopicPartition], set[TopicPartition]]:
        config = {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "heartbeat.interval.ms": "100",
            "partition.assignment.strategy": "roundrobin",
            "enable.auto.commit": "false",
        }
        first, second = Consumer(config), Consumer(config)
        first.subscribe([topic_name])
        second.subscribe([topic_name])

        async def keep_polling(consumer: Consumer) -> None:
            while True:
                await consumer.poll(50)

        tasks = [asyncio.ensure_future(keep_polling(c)) for c in (first, second)]
        deadline = time.monotonic() + 30
        while not (len(first.assignment()) == 2 and len(second.assignment()) == 2):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await first.commit({TopicPartition(topic_name, p): 1 for p in range(4)})
        result = first.assignment(), second.assignment()
        await first.close()
        await second.close()
        return result

    mine, theirs = asyncio.run(scenario())
    assert mine | theirs == {TopicPartition(topic_name, p) for p in range(4)}
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        assert group in {g.group_id for g in admin.list_groups()}
        assert admin.describe_groups([group])[group].state == "Empty"
        tps = [TopicPartition(topic_name, p) for p in range(4)]
        assert admin.list_consumer_group_offsets(group, tps) == dict.fromkeys(
            tps, OffsetAndMetadata(1)
        )
        reset = admin.reset_consumer_group_offsets(group, tps, "earliest")
        assert reset == dict.fromkeys(tps, 0)
        admin.alter_consumer_group_offsets(group, {tps[0]: 7})
        assert admin.list_consumer_group_offsets(group, tps[:1]) == {tps[0]: OffsetAndMetadata(7)}


def test_producer_retries_across_a_broker_restart(
    fresh_broker: Callable[..., BrokerProcess], topic_name: str
) -> None:
    server: BrokerProcess = fresh_broker()
    config = {"bootstrap.servers": server.bootstrap, "retry.backoff.ms": "50", "linger.ms": "0"}
    with SyncProducer(config) as producer:
        first = [producer.send(topic_name, b"before-%d" % i) for i in range(50)]
        producer.flush(30)
        server.restart()  # connections drop: NETWORK_EXCEPTION, retried
        second = [producer.send(topic_name, b"after-%d" % i) for i in range(50)]
        producer.flush(60)
    offsets = [f.result(0).offset for f in first + second]
    assert offsets == list(range(100))


def test_delivery_timeout_fails_records_when_the_broker_is_gone(
    fresh_broker: Callable[..., BrokerProcess], topic_name: str
) -> None:
    server: BrokerProcess = fresh_broker()
    config = {
        "bootstrap.servers": server.bootstrap,
        "request.timeout.ms": "500",
        "delivery.timeout.ms": "1500",
        "retry.backoff.ms": "50",
    }
    with SyncProducer(config) as producer:
        producer.send(topic_name, b"warm-up").result(30)
        server.stop()
        future = producer.send(topic_name, b"lost")
        with pytest.raises(RequestTimedOutError, match=r"delivery\.timeout\.ms"):
            future.result(30)
        producer.close(1)


def test_auto_offset_reset_none_refuses_to_guess(broker: BrokerProcess, topic_name: str) -> None:
    with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
        producer.send(topic_name, b"x").result(30)
    config = {
        "bootstrap.servers": broker.bootstrap,
        "group.id": f"g-{topic_name}",
        "auto.offset.reset": "none",
    }
    with SyncConsumer(config) as consumer:
        consumer.assign([TopicPartition(topic_name, 0)])
        with pytest.raises(NoOffsetForPartitionError):
            consumer.poll(5)


def test_out_of_range_with_reset_none_raises_once_and_a_seek_clears_it(
    broker: BrokerProcess, topic_name: str
) -> None:
    """OFFSET_OUT_OF_RANGE is raised by one poll; after a seek no stale error comes back."""
    with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
        for i in range(10):
            producer.send(topic_name, b"v%d" % i, partition=0).result(30)
    tp = TopicPartition(topic_name, 0)
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        assert admin.delete_records({tp: 6}) == {tp: 6}
    with SyncConsumer({"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "none"}) as c:
        c.assign([tp])
        c.seek(tp, 2)  # deleted
        with pytest.raises(OffsetOutOfRangeError, match=f"fetching {topic_name}-0 at offset 2"):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                c.poll(1.0)
        assert c.poll(0.5) == []  # raised once; the partition waits for a seek
        c.seek(tp, 6)
        records = []
        deadline = time.monotonic() + 30
        while len(records) < 4 and time.monotonic() < deadline:
            records += c.poll(1.0)  # would raise a stale error before the fix
    assert [r.value for r in records] == [b"v6", b"v7", b"v8", b"v9"]


def test_a_consumer_that_stops_polling_leaves_its_group(
    broker: BrokerProcess, topic_name: str
) -> None:
    group = f"g-{topic_name}"
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic_name, 2)

        async def scenario() -> tuple[str, str]:
            config = {
                "bootstrap.servers": broker.bootstrap,
                "group.id": group,
                "heartbeat.interval.ms": "50",
                "max.poll.interval.ms": "500",
            }
            async with Consumer(config) as consumer:
                consumer.subscribe([topic_name])
                while len(consumer.assignment()) < 2:
                    await consumer.poll(100)
                loop = asyncio.get_running_loop()
                joined = await loop.run_in_executor(None, admin.describe_groups, [group])
                await asyncio.sleep(1.5)  # heartbeats continue, polls do not
                left = await loop.run_in_executor(None, admin.describe_groups, [group])
                while len(consumer.assignment()) < 2:  # polling again rejoins
                    await consumer.poll(100)
                return joined[group].state, left[group].state

        joined, left = asyncio.run(scenario())
    assert (joined, left) == ("Stable", "Empty")


def test_a_group_subscribed_before_its_topic_exists_reads_it_once_created(
    broker: BrokerProcess, topic_name: str
) -> None:
    """A consumer group that formed while its topic did not exist yet (the topic comes
    from a producer a moment later, as a Connect sink's topic often does) gets the
    partitions once the topic appears: its client keeps asking for the topic's metadata
    (it waited for ``metadata.max.age.ms``, 5 minutes, before)."""

    async def scenario() -> list[bytes]:
        consumer = Consumer({
            "bootstrap.servers": broker.bootstrap, "group.id": f"late-{topic_name}",
            "auto.offset.reset": "earliest", "allow.auto.create.topics": "false",
        })  # fmt: skip
        assignments: list[list[TopicPartition]] = []

        def assigned(partitions: list[TopicPartition]) -> None:
            assignments.append(list(partitions))

        consumer.subscribe([topic_name], on_assign=assigned)
        deadline = time.monotonic() + 30
        while not assignments:
            assert time.monotonic() < deadline, "the group formed"
            await consumer.poll(100)
        assert assignments == [[]]  # formed without the topic
        with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
            admin.create_topic(topic_name, 1)
        with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
            producer.send(topic_name, b"late")
            producer.flush()
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while not got:
            assert time.monotonic() < deadline, "the record of the late topic"
            got += [record.value for record in await consumer.poll(200)]
        await consumer.close()
        return got

    assert asyncio.run(scenario()) == [b"late"]
