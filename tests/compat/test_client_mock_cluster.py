"""Our client against librdkafka's built-in mock cluster, with confluent-kafka as the peer.

The mock cluster is a Kafka-protocol broker written by others (produce, fetch,
list offsets, metadata, groups and offsets; topics are created on first use
with 4 partitions). Records go both ways between our client and librdkafka,
with every codec, keys and headers; groups mix our members with each other and
with a librdkafka member. Our client is held to classic versions here (see
``classic_versions_only``).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable, Iterator

import confluent_kafka
import pytest

from log_engine.client import (
    Consumer,
    Producer,
    SyncConsumer,
    SyncProducer,
    TopicPartition,
    connection,
)
from log_engine.client.partitioner import partition_for_key
from log_engine.protocol.versions import CLIENT_VERSIONS, SUPPORTED_VERSIONS

pytestmark = pytest.mark.compat

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
MOCK_PARTITIONS = 4
_names = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def classic_versions_only() -> Iterator[None]:
    """Our client speaks only classic versions to the mock cluster, as before flexible ones.

    The mock (librdkafka 2.16) advertises flexible versions its handlers do not
    parse: SyncGroup v4 reads the assignment count as an int32 and JoinGroup v6
    closes the connection; its flexible Metadata bodies end with one byte too
    many. Flexible versions are checked against Tansu (test_client_tansu.py).
    """
    classic = {key: SUPPORTED_VERSIONS[key] for key in CLIENT_VERSIONS}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(connection, "CLIENT_VERSIONS", classic)
        yield


@pytest.fixture(scope="module")
def mock_cluster() -> Iterator[str]:
    """Three mock brokers, kept alive by the librdkafka handle that owns them."""
    owner = confluent_kafka.Producer({"test.mock.num.brokers": 3, "log_level": 3})
    metadata = owner.list_topics(timeout=10)
    yield ",".join(f"{b.host}:{b.port}" for b in metadata.brokers.values())
    owner.flush(1)


def _topic(prefix: str) -> str:
    return f"{prefix}-{next(_names)}-{int(time.time() * 1000) % 100000}"


def _create(bootstrap: str, topic: str) -> None:
    """Create ``topic`` (mock clusters auto-create on metadata requests)."""
    peer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    peer.list_topics(topic, timeout=10)
    peer.flush(1)


def _confluent_read(bootstrap: str, topic: str, count: int) -> list[confluent_kafka.Message]:
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False}
    )
    consumer.assign(
        [
            confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
            for p in range(MOCK_PARTITIONS)
        ]
    )
    messages: list[confluent_kafka.Message] = []
    deadline = time.monotonic() + 30
    while len(messages) < count and time.monotonic() < deadline:
        for message in consumer.consume(count - len(messages), timeout=0.5):
            assert message.error() is None, message.error()
            messages.append(message)
    consumer.close()
    return messages


def _expected_records(n: int) -> list[tuple[bytes, bytes | None, list[tuple[str, bytes | None]]]]:
    out = []
    for i in range(n):
        value = None if i % 17 == 5 else b"value-%d-" % i + b"z" * (i % 50)
        headers = [("trace", b"%d" % i), ("empty", None)] if i % 3 == 0 else []
        out.append((b"key-%d" % (i % 23), value, headers))
    return out


@pytest.mark.parametrize("codec", CODECS)
def test_our_producer_to_librdkafka_consumer(mock_cluster: str, codec: str) -> None:
    topic = _topic(f"ours-{codec}")
    expected = _expected_records(300)
    with SyncProducer({"bootstrap.servers": mock_cluster, "compression.type": codec}) as producer:
        futures = [producer.send(topic, v, key=k, headers=h) for k, v, h in expected]
        producer.flush(30)
        delivered = [f.result(0) for f in futures]
    assert all(
        m.partition == partition_for_key(k, MOCK_PARTITIONS)
        for m, (k, _, _) in zip(delivered, expected, strict=True)
    )
    messages = _confluent_read(mock_cluster, topic, len(expected))
    got = sorted(
        (m.partition(), m.offset(), m.key(), m.value(), [(n, v) for n, v in m.headers() or []])
        for m in messages
    )
    want = sorted(
        (d.partition, d.offset, k, v, h) for d, (k, v, h) in zip(delivered, expected, strict=True)
    )
    assert got == want


@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_producer_to_our_consumer(mock_cluster: str, codec: str) -> None:
    topic = _topic(f"theirs-{codec}")
    expected = _expected_records(300)
    peer = confluent_kafka.Producer(
        {
            "bootstrap.servers": mock_cluster,
            "compression.type": codec,
            "linger.ms": 5,
            "partitioner": "murmur2_random",
        }
    )
    for key, value, headers in expected:
        peer.produce(topic, value, key=key, headers=headers)
    assert peer.flush(30) == 0
    consumer = SyncConsumer({"bootstrap.servers": mock_cluster, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p) for p in range(MOCK_PARTITIONS)])
    records = []
    deadline = time.monotonic() + 30
    while len(records) < len(expected) and time.monotonic() < deadline:
        records += consumer.poll(1.0)
    consumer.close()
    got = sorted(((r.key, r.value, list(r.headers)) for r in records), key=repr)
    assert got == sorted(expected, key=repr)
    for record in records:
        assert record.partition == partition_for_key(record.key, MOCK_PARTITIONS)
    per_partition = sorted((r.partition, r.offset) for r in records)
    assert len(set(per_partition)) == len(records)


def test_keyed_partitions_match_librdkafka_murmur2(mock_cluster: str) -> None:
    topic = _topic("murmur")
    keys = [b"", b"k", b"\xff\xfe"] + [b"customer-%d" % i for i in range(60)]
    chosen: dict[bytes, int] = {}
    peer = confluent_kafka.Producer(
        {"bootstrap.servers": mock_cluster, "partitioner": "murmur2_random"}
    )
    for key in keys:
        peer.produce(
            topic,
            b"v",
            key=key,
            on_delivery=lambda _e, m: chosen.__setitem__(m.key(), m.partition()),
        )
    assert peer.flush(30) == 0
    assert {k: partition_for_key(k, MOCK_PARTITIONS) for k in keys} == chosen


def test_idempotent_producer_keeps_order_per_partition(mock_cluster: str) -> None:
    topic = _topic("idem")
    _create(mock_cluster, topic)
    config = {
        "bootstrap.servers": mock_cluster,
        "enable.idempotence": "true",
        "batch.size": "2000",
        "linger.ms": "0",
        "max.in.flight.requests.per.connection": "5",
    }
    with SyncProducer(config) as producer:
        futures = [producer.send(topic, b"%06d" % i, partition=1) for i in range(3000)]
        producer.flush(30)
        assert producer._producer._sender._producer_id >= 0
    offsets = [f.result(0).offset for f in futures]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    messages = sorted(_confluent_read(mock_cluster, topic, 3000), key=lambda m: m.offset())
    assert [m.value() for m in messages] == [b"%06d" % i for i in range(3000)]


def test_acks_zero_delivers_without_offsets(mock_cluster: str) -> None:
    topic = _topic("acks0")
    _create(mock_cluster, topic)

    async def produce() -> list[int]:
        async with Producer({"bootstrap.servers": mock_cluster, "acks": 0}) as producer:
            futures = [await producer.send(topic, b"x", partition=0) for _ in range(50)]
            await producer.flush()
            return [(await f).offset for f in futures]

    assert asyncio.run(produce()) == [-1] * 50
    assert len(_confluent_read(mock_cluster, topic, 50)) == 50


def _group_config(bootstrap: str, group: str, **extra: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "heartbeat.interval.ms": "100",
        "session.timeout.ms": "3500",  # above the mock's 3 s initial rebalance delay
        **extra,
    }


async def _poll_until(
    consumers: list[Consumer], done: Callable[[], bool], timeout_s: float = 30
) -> None:
    """Poll every consumer in its own loop (a rebalance needs all of them) until ``done()``."""
    finished = asyncio.Event()

    async def keep_polling(consumer: Consumer) -> None:
        while not finished.is_set():
            await consumer.poll(50)
            if done():
                finished.set()

    tasks = [asyncio.ensure_future(keep_polling(c)) for c in consumers]
    try:
        await asyncio.wait_for(finished.wait(), timeout_s)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_group_rebalances_between_two_of_our_members(mock_cluster: str) -> None:
    topic = _topic("group")
    _create(mock_cluster, topic)
    everything = {TopicPartition(topic, p) for p in range(MOCK_PARTITIONS)}

    async def scenario() -> None:
        first = Consumer(_group_config(mock_cluster, f"g-{topic}"))
        second = Consumer(
            _group_config(mock_cluster, f"g-{topic}", **{"partition.assignment.strategy": "range"})
        )
        revoked: list[list[TopicPartition]] = []
        first.subscribe([topic], on_revoke=revoked.append)
        await _poll_until([first], lambda: first.assignment() == everything)
        second.subscribe([topic])
        await _poll_until(
            [first, second],
            lambda: len(first.assignment()) == 2 and len(second.assignment()) == 2,
        )
        assert first.assignment() | second.assignment() == everything
        assert revoked and set(revoked[-1]) == everything
        await second.close()
        await _poll_until([first], lambda: first.assignment() == everything)
        await first.close()

    asyncio.run(scenario())


def test_commits_are_read_back_by_us_and_librdkafka(mock_cluster: str) -> None:
    topic = _topic("commit")
    group = f"g-{topic}"
    with SyncProducer({"bootstrap.servers": mock_cluster}) as producer:
        for i in range(40):
            producer.send(topic, b"%d" % i, partition=i % MOCK_PARTITIONS)
        producer.flush(30)
    in_callback: list[str] = []
    consumer = SyncConsumer(_group_config(mock_cluster, group, **{"enable.auto.commit": "false"}))

    def on_assign(partitions: list[TopicPartition]) -> None:
        in_callback.append(threading.current_thread().name)
        consumer.committed(partitions)  # calling back into the consumer from its callback

    consumer.subscribe([topic], on_assign=on_assign)
    seen = 0
    deadline = time.monotonic() + 30
    while seen < 40 and time.monotonic() < deadline:
        seen += len(consumer.poll(0.5))
    assert seen == 40
    assert in_callback == [threading.current_thread().name]
    consumer.commit()
    explicit = {TopicPartition(topic, 0): 3}
    consumer.commit(explicit)
    tps = [TopicPartition(topic, p) for p in range(MOCK_PARTITIONS)]
    ours = consumer.committed(tps)
    consumer.close()
    assert {tp: o.offset for tp, o in ours.items() if o} == {**dict.fromkeys(tps, 10), **explicit}
    peer = confluent_kafka.Consumer({"bootstrap.servers": mock_cluster, "group.id": group})
    theirs = peer.committed(
        [confluent_kafka.TopicPartition(topic, p) for p in range(4)], timeout=10
    )
    peer.close()
    assert [tp.offset for tp in theirs] == [3, 10, 10, 10]


def test_librdkafka_member_shares_a_group_with_ours(mock_cluster: str) -> None:
    topic = _topic("mixed")
    _create(mock_cluster, topic)
    group = f"g-{topic}"
    peer = confluent_kafka.Consumer(
        {**_group_config(mock_cluster, group), "partition.assignment.strategy": "range"}
    )
    peer_assignment: list[list[tuple[str, int]]] = []
    peer.subscribe(
        [topic],
        on_assign=lambda _c, ps: peer_assignment.append([(p.topic, p.partition) for p in ps]),
    )
    stop = threading.Event()
    poller = threading.Thread(target=lambda: [peer.poll(0.05) for _ in iter(stop.is_set, True)])
    poller.start()
    try:

        async def ours() -> set[TopicPartition]:
            consumer = Consumer(_group_config(mock_cluster, group))
            consumer.subscribe([topic])
            await _poll_until(
                [consumer],
                lambda: (
                    len(consumer.assignment()) == 2
                    and bool(peer_assignment)
                    and len(peer_assignment[-1]) == 2
                ),
            )
            mine = consumer.assignment()
            await consumer.close()
            return mine

        mine = asyncio.run(ours())
    finally:
        stop.set()
        poller.join(10)
        peer.close()
    theirs = {TopicPartition(t, p) for t, p in peer_assignment[-1]}
    assert mine.isdisjoint(theirs)
    assert mine | theirs == {TopicPartition(topic, p) for p in range(MOCK_PARTITIONS)}
