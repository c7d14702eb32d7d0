"""ISR replication among three in-process brokers whose partition states the test applies.

The test plays the controller (``tests/support/replica_cluster.py``): it
creates an RF=3 partition led by broker 1, accepts the leaders' ISR changes
and elects new leaders. Everything else is real: logs on disk, sockets,
follower fetchers, our client and librdkafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import confluent_kafka
import pytest

from log_engine.client import Producer
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.records import Record, build_batch
from tests.support.replica_cluster import TestController, log_bytes

TOPIC = "replicated"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[TestController]:
    controller = TestController(
        tmp_path, **{"replica.lag.time.max.ms": "1000", "min.insync.replicas": "2"}
    )
    await controller.start_all()
    controller.create_topic(TOPIC)
    yield controller
    await controller.stop_all()


async def _produce_ours(bootstrap: str, values: list[bytes]) -> list[int]:
    config = {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True}
    async with Producer(config) as producer:
        futures = [await producer.send(TOPIC, v, partition=0) for v in values]
        return [(await f).offset for f in futures]


def _produce_librdkafka(bootstrap: str, values: list[bytes]) -> list[int]:
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True}
    )
    offsets: list[int] = []
    errors: list[object] = []

    def delivered(err: object, msg: confluent_kafka.Message) -> None:
        if err is not None:
            errors.append(err)
        else:
            offsets.append(msg.offset())

    for value in values:
        producer.produce(TOPIC, value, partition=0, on_delivery=delivered)
    assert producer.flush(60) == 0
    assert not errors, errors
    return offsets


async def _connection(controller: TestController, node_id: int) -> BrokerConnection:
    port = controller.ports[node_id]
    config = ClientConfig.from_mapping({"bootstrap.servers": f"127.0.0.1:{port}"})
    return await BrokerConnection.open("127.0.0.1", port, config, node_id)


async def _consumer_fetch(
    conn: BrokerConnection, offset: int, current_leader_epoch: int = -1
) -> dict[str, object]:
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": TOPIC,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": current_leader_epoch,
                        "fetch_offset": offset,
                        "last_fetched_epoch": -1,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    response = await conn.send(ApiKey.FETCH, body)
    partition: dict[str, object] = response["responses"][0]["partitions"][0]
    return partition


async def _produce_raw(
    conn: BrokerConnection, acks: int, value: bytes, timeout_ms: int = 30_000
) -> int:
    batch = build_batch([Record(None, value)])
    body = {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": timeout_ms,
        "topic_data": [
            {"name": TOPIC, "partition_data": [{"index": 0, "records": batch}]},
        ],
    }
    response = await conn.send(ApiKey.PRODUCE, body)
    return int(response["responses"][0]["partition_responses"][0]["error_code"])


async def _latest_offset(conn: BrokerConnection) -> int:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    response = await conn.send(ApiKey.LIST_OFFSETS, body)
    answer = response["topics"][0]["partitions"][0]
    assert answer["error_code"] == 0
    return int(answer["offset"])


def _identical_logs(controller: TestController, nodes: list[int]) -> bytes:
    logs = {n: log_bytes(controller.brokers[n], TOPIC, 0) for n in nodes}
    first = logs[nodes[0]]
    assert all(data == first for data in logs.values()), {n: len(d) for n, d in logs.items()}
    return first


async def test_acks_all_from_both_clients_reaches_all_three_logs(
    cluster: TestController,
) -> None:
    ours = await _produce_ours(cluster.bootstrap, [b"ours-%d" % i for i in range(200)])
    theirs = await asyncio.to_thread(
        _produce_librdkafka, cluster.bootstrap, [b"rdkafka-%d" % i for i in range(200)]
    )
    assert ours == list(range(200))
    assert sorted(theirs) == list(range(200, 400))
    leader = cluster.brokers[1].topics.partition(TOPIC, 0)
    assert leader is not None and leader.high_watermark == 400  # acked = replicated
    await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
    data = _identical_logs(cluster, [1, 2, 3])
    assert b"ours-199" in data and b"rdkafka-199" in data
    for node in (2, 3):  # followers kept producer ids and sequences: they can lead
        follower = cluster.brokers[node].topics.partition(TOPIC, 0)
        assert follower is not None
        assert len(follower.producers) == len(leader.producers) == 2


async def test_produce_and_fetch_on_a_follower_get_not_leader(cluster: TestController) -> None:
    await _produce_ours(cluster.bootstrap, [b"x"])
    conn = await _connection(cluster, 2)
    try:
        fetched = await _consumer_fetch(conn, 0)
        assert fetched["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    finally:
        conn.close()


async def test_a_fetch_naming_another_leader_epoch_is_refused(cluster: TestController) -> None:
    conn = await _connection(cluster, 1)
    try:
        assert (await _consumer_fetch(conn, 0, current_leader_epoch=1))["error_code"] == 0
        old = await _consumer_fetch(conn, 0, current_leader_epoch=0)
        assert old["error_code"] == ErrorCode.FENCED_LEADER_EPOCH
        new = await _consumer_fetch(conn, 0, current_leader_epoch=2)
        assert new["error_code"] == ErrorCode.UNKNOWN_LEADER_EPOCH
    finally:
        conn.close()


async def test_acks_all_times_out_while_an_isr_member_lags(tmp_path: Path) -> None:
    cluster = TestController(tmp_path, **{"replica.lag.time.max.ms": "600000"})
    await cluster.start_all()
    try:
        cluster.create_topic(TOPIC)
        await _produce_ours(cluster.bootstrap, [b"first"])
        await cluster.stop(3)  # still in the ISR: nothing shrinks it for 10 minutes
        conn = await _connection(cluster, 1)
        try:
            code = await _produce_raw(conn, -1, b"stuck", timeout_ms=200)
            assert code == ErrorCode.REQUEST_TIMED_OUT
            assert await _produce_raw(conn, 1, b"acks-1") == 0
        finally:
            conn.close()
        leader = cluster.brokers[1].topics.partition(TOPIC, 0)
        assert leader is not None and leader.high_watermark == 1
        assert leader.log.log_end_offset == 3
    finally:
        await cluster.stop_all()


async def test_a_restarted_leader_keeps_its_high_watermark(cluster: TestController) -> None:
    await _produce_ours(cluster.bootstrap, [b"committed-%d" % i for i in range(5)])
    await cluster.stop_all()
    await cluster.start(1)  # followers still down: only the checkpoint knows the HW
    leader = cluster.brokers[1].topics.partition(TOPIC, 0)
    assert leader is not None and leader.leader_state is not None
    assert leader.high_watermark == 5
    conn = await _connection(cluster, 1)
    try:
        assert await _latest_offset(conn) == 5
    finally:
        conn.close()


async def test_consumers_never_see_above_the_high_watermark(cluster: TestController) -> None:
    await _produce_ours(cluster.bootstrap, [b"committed-%d" % i for i in range(5)])
    await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
    await cluster.stop(2)
    await cluster.stop(3)
    config = {"bootstrap.servers": cluster.bootstrap, "acks": "1"}
    async with Producer(config) as producer:
        future = await producer.send(TOPIC, b"uncommitted", partition=0)
        assert (await future).offset == 5
    conn = await _connection(cluster, 1)
    try:
        leader = cluster.brokers[1].topics.partition(TOPIC, 0)
        assert leader is not None and leader.log.log_end_offset == 6
        assert await _latest_offset(conn) == 5
        fetched = await _consumer_fetch(conn, 0)
        assert fetched["error_code"] == 0 and fetched["high_watermark"] == 5
        assert b"uncommitted" not in bytes(fetched["records"] or b"")  # type: ignore[arg-type]
        assert b"committed-4" in bytes(fetched["records"] or b"")  # type: ignore[arg-type]
        past = await _consumer_fetch(conn, 5)
        assert past["error_code"] == 0 and not past["records"]
    finally:
        conn.close()


async def test_a_stopped_follower_leaves_the_isr_and_rejoins(cluster: TestController) -> None:
    await _produce_ours(cluster.bootstrap, [b"before-%d" % i for i in range(10)])
    await cluster.stop(3)
    # As in Kafka, a follower that is at the leader's log end counts as caught up:
    # the next write leaves it behind, and replica.lag.time.max.ms later it is out.
    waiting = asyncio.create_task(_produce_ours(cluster.bootstrap, [b"two-in-sync"]))
    await cluster.wait_for_isr(TOPIC, 0, {1, 2})
    assert await waiting == [10]  # acks=all answered once the ISR was {1, 2}

    await cluster.stop(2)
    async with Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1"}) as producer:
        await (await producer.send(TOPIC, b"acks-1", partition=0))
    await cluster.wait_for_isr(TOPIC, 0, {1})
    conn = await _connection(cluster, 1)
    try:  # on the wire: clients retry NOT_ENOUGH_REPLICAS until their delivery timeout
        assert await _produce_raw(conn, -1, b"one-in-sync") == ErrorCode.NOT_ENOUGH_REPLICAS
    finally:
        conn.close()
    leader = cluster.brokers[1].topics.partition(TOPIC, 0)
    assert leader is not None and leader.log.log_end_offset == 12  # refused before appending

    await cluster.start(3)
    await cluster.wait_for_isr(TOPIC, 0, {1, 3})
    await cluster.start(2)
    await cluster.wait_for_isr(TOPIC, 0, {1, 2, 3})
    assert await _produce_ours(cluster.bootstrap, [b"three-again"]) == [12]
    await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
    _identical_logs(cluster, [1, 2, 3])


async def test_after_a_leader_change_a_diverged_follower_truncates(
    cluster: TestController,
) -> None:
    await _produce_ours(cluster.bootstrap, [b"committed-%d" % i for i in range(10)])
    await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
    await cluster.stop(3)
    config = {"bootstrap.servers": cluster.bootstrap, "acks": "1"}
    async with Producer(config) as producer:  # replicated to 2 only, never committed
        for i in range(5):
            await (await producer.send(TOPIC, b"lost-%d" % i, partition=0))
    await cluster.wait_replicated(TOPIC, 0, [1, 2])
    diverged = cluster.brokers[2].topics.partition(TOPIC, 0)
    assert diverged is not None and diverged.log.log_end_offset == 15

    await cluster.stop(1)  # the old leader dies; 3 (still in the ISR) is elected
    await cluster.start(3)
    cluster.elect(TOPIC, 0, leader=3, isr=(2, 3))
    assert await _produce_ours(cluster.bootstrap, [b"new-leader-%d" % i for i in range(3)]) == [
        10,
        11,
        12,
    ]
    await cluster.wait_replicated(TOPIC, 0, [2, 3])
    data = _identical_logs(cluster, [2, 3])
    assert b"lost-" not in data and b"new-leader-2" in data

    await cluster.start(1)  # the old leader comes back as a follower and truncates too
    await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
    assert b"lost-" not in _identical_logs(cluster, [1, 2, 3])
    new_leader = cluster.brokers[3].topics.partition(TOPIC, 0)
    assert new_leader is not None
    assert new_leader.log.leader_epochs.entries == [(1, 0), (2, 10)]
    for node in (1, 2):
        follower = cluster.brokers[node].topics.partition(TOPIC, 0)
        assert follower is not None
        assert follower.log.leader_epochs.entries == [(1, 0), (2, 10)]


async def test_a_follower_behind_the_leaders_log_start_restarts_there(
    cluster: TestController,
) -> None:
    await _produce_ours(cluster.bootstrap, [b"early-%d" % i for i in range(10)])
    await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
    await cluster.stop(3)
    cluster.elect(TOPIC, 0, leader=1, isr=(1, 2))  # as the controller would after fencing 3
    await _produce_ours(cluster.bootstrap, [b"late-%d" % i for i in range(10)])
    leader = cluster.brokers[1].topics.partition(TOPIC, 0)
    assert leader is not None
    leader.log.delete_records_before(15)  # DeleteRecords or retention on the leader

    follower = (await cluster.start(3)).topics.partition(TOPIC, 0)
    await cluster.wait_for_isr(TOPIC, 0, {1, 2, 3})
    await cluster.wait_replicated(TOPIC, 0, [1, 3])
    assert follower is not None and follower.log.log_start_offset == 15
    assert log_bytes(cluster.brokers[3], TOPIC, 0) == log_bytes(cluster.brokers[1], TOPIC, 0)


async def test_a_broker_removed_from_the_replicas_stops_leading(tmp_path: Path) -> None:
    cluster = TestController(tmp_path)
    await cluster.start_all()
    try:
        cluster.create_topic(TOPIC)
        await _produce_ours(cluster.bootstrap, [b"x"])
        await cluster.wait_replicated(TOPIC, 0, [1, 2, 3])
        state = cluster.states[(TOPIC, 0)]
        cluster.states[(TOPIC, 0)] = replace(
            state,
            leader=2,
            leader_epoch=2,
            partition_epoch=2,
            replicas=(2, 3),
            isr=(2, 3),
        )
        cluster.publish()
        conn = await _connection(cluster, 1)
        try:
            assert await _produce_raw(conn, 1, b"y") == ErrorCode.NOT_LEADER_OR_FOLLOWER
            fetched = await _consumer_fetch(conn, 0)
            assert fetched["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
        finally:
            conn.close()
        assert await _produce_ours(cluster.bootstrap, [b"z"]) == [1]  # clients move to 2
    finally:
        await cluster.stop_all()
