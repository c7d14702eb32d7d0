"""ISR replication among three broker processes: kill -9 of the leader, failover, rejoin.

The test is the controller (``tests/support/replica_processes.py``): it
elects the next leader from the ISR after killing the old one, as the active
controller will once it exists. librdkafka and our client, idempotent with
acks=all, keep producing through the failover; a paused (SIGSTOP) follower
leaves the ISR and rejoins after SIGCONT. At the end every acknowledged
record is in every replica's log, once, at its acknowledged offset, and the
three logs are byte-identical.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import confluent_kafka

from log_engine.client import SyncProducer
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.records import Record, build_batch, decode_batch, iter_batches
from log_engine.storage.config import LogConfig
from log_engine.storage.partition_log import PartitionLog
from tests.support.replica_processes import ProcessController

TOPIC = "failover"


def _log_bytes(directory: Path) -> bytes:
    log = PartitionLog.open(directory, LogConfig.from_properties({}))
    try:
        out = bytearray()
        offset = log.log_start_offset
        while offset < log.log_end_offset:
            result = log.read(offset, 1 << 20)
            out += result.read_bytes()
            offset = result.next_offset
        return bytes(out)
    finally:
        log.close()


def _values_by_offset(data: bytes) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for pos, _ in iter_batches(data):
        _, records = decode_batch(data, pos)
        for record in records:
            assert record.offset not in out
            out[record.offset] = bytes(record.value or b"")
    return out


class _Acks:
    """Delivery reports of one librdkafka producer."""

    def __init__(self) -> None:
        self.by_offset: dict[int, bytes] = {}
        self.errors: list[object] = []
        self._lock = threading.Lock()

    def __call__(self, err: object, msg: confluent_kafka.Message) -> None:
        with self._lock:
            if err is not None:
                self.errors.append(err)
            else:
                self.by_offset[msg.offset()] = msg.value()

    def __len__(self) -> int:
        with self._lock:
            return len(self.by_offset)


def test_kill_9_of_the_leader_loses_no_acknowledged_record(tmp_path: Path) -> None:
    cluster = ProcessController(
        tmp_path, **{"replica.lag.time.max.ms": "1000", "min.insync.replicas": "2"}
    )
    try:
        cluster.start_all()
        cluster.create_topic(TOPIC)
        acks = _Acks()
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "retry.backoff.ms": 50,
            }
        )
        for i in range(300):
            producer.produce(TOPIC, b"before-%d" % i, partition=0, on_delivery=acks)
        assert producer.flush(60) == 0

        cluster.pause(3)  # SIGSTOP: out of the ISR after replica.lag.time.max.ms
        for i in range(100):
            producer.produce(TOPIC, b"paused-%d" % i, partition=0, on_delivery=acks)
        assert producer.flush(60) == 0  # acknowledged once the ISR is {1, 2}
        assert cluster.isr(TOPIC) == {1, 2}
        cluster.resume(3)
        cluster.wait_for_isr(TOPIC, {1, 2, 3})

        ours = SyncProducer(
            {"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True}
        )
        try:
            ours_futures = [
                ours.send(TOPIC, b"ours-%d" % i, partition=0) for i in range(300)
            ]  # and our client's records too, partly in flight while the leader dies
            for i in range(300):
                producer.produce(TOPIC, b"during-%d" % i, partition=0, on_delivery=acks)
            while len(acks) < 500:
                producer.poll(0.001)
            cluster.kill(1)
            cluster.elect(TOPIC, leader=2, isr=(2, 3))
            assert producer.flush(120) == 0
            ours.flush(120)
            for i, future in enumerate(ours_futures):
                acks.by_offset[future.result().offset] = b"ours-%d" % i
        finally:
            ours.close()

        cluster.start(1)  # back as a follower: truncates its unacknowledged tail, catches up
        cluster.wait_for_isr(TOPIC, {1, 2, 3})
        producer.produce(TOPIC, b"after", partition=0, on_delivery=acks)
        assert producer.flush(60) == 0  # acks=all with all three in the ISR: all have it
        assert not acks.errors, acks.errors
        assert len(acks) == 1001
    finally:
        cluster.stop_all()

    logs = [_log_bytes(tmp_path / f"broker{n}" / f"{TOPIC}-0") for n in (1, 2, 3)]
    assert logs[0] == logs[1] == logs[2]
    stored = _values_by_offset(logs[0])
    for offset, value in acks.by_offset.items():
        assert stored[offset] == value
    assert sorted(stored.values()) == sorted(acks.by_offset.values())  # each once


def _produce(bootstrap: str, acks: str, values: list[bytes]) -> _Acks:
    delivered = _Acks()
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "acks": acks, "enable.idempotence": acks == "all"}
    )
    for value in values:
        producer.produce(TOPIC, value, partition=0, on_delivery=delivered)
    assert producer.flush(60) == 0
    assert not delivered.errors, delivered.errors
    return delivered


def test_a_killed_leader_truncates_what_it_alone_had(tmp_path: Path) -> None:
    cluster = ProcessController(tmp_path, **{"min.insync.replicas": "2"})
    try:
        cluster.start_all()
        cluster.create_topic(TOPIC)
        committed = _produce(cluster.bootstrap, "all", [b"committed-%d" % i for i in range(50)])
        cluster.kill(2)  # both followers die; the ISR is still {1, 2, 3}
        cluster.kill(3)
        _produce(cluster.bootstrap, "1", [b"only-on-1-%d" % i for i in range(20)])
        cluster.kill(1)
        cluster.start(2)
        cluster.start(3)
        cluster.elect(TOPIC, leader=2, isr=(2, 3))
        after = _produce(cluster.bootstrap, "all", [b"after-%d" % i for i in range(30)])
        assert sorted(after.by_offset) == list(range(50, 80))  # where 1's tail was
        cluster.start(1)
        cluster.wait_for_isr(TOPIC, {1, 2, 3})
        last = _produce(cluster.bootstrap, "all", [b"last"])
        assert list(last.by_offset) == [80]
    finally:
        cluster.stop_all()
    assert "truncating from 70 to 50" in cluster.nodes[1].log_path.read_text()
    logs = [_log_bytes(tmp_path / f"broker{n}" / f"{TOPIC}-0") for n in (1, 2, 3)]
    assert logs[0] == logs[1] == logs[2]
    stored = _values_by_offset(logs[0])
    assert not any(v.startswith(b"only-on-1") for v in stored.values())
    for offset, value in {**committed.by_offset, **after.by_offset}.items():
        assert stored[offset] == value


async def _produce_raw(port: int, value: bytes, timeout_ms: int) -> int:
    config = ClientConfig.from_mapping({"bootstrap.servers": f"127.0.0.1:{port}"})
    conn = await BrokerConnection.open("127.0.0.1", port, config)
    try:
        body = {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": timeout_ms,
            "topic_data": [
                {
                    "name": TOPIC,
                    "partition_data": [{"index": 0, "records": build_batch([Record(None, value)])}],
                }
            ],
        }
        response = await conn.send(ApiKey.PRODUCE, body)
        return int(response["responses"][0]["partition_responses"][0]["error_code"])
    finally:
        conn.close()


def test_a_paused_leader_cut_off_from_the_controller_acknowledges_nothing(
    tmp_path: Path,
) -> None:
    cluster = ProcessController(tmp_path, **{"min.insync.replicas": "2"})
    try:
        cluster.start_all()
        cluster.create_topic(TOPIC)
        committed = _produce(cluster.bootstrap, "all", [b"committed-%d" % i for i in range(20)])
        cluster.pause(1)  # SIGSTOP past any session timeout...
        cluster.isolated.add(1)  # ...and it hears nothing from the controller
        cluster.elect(TOPIC, leader=2, isr=(2, 3))
        cluster.resume(1)  # a zombie: it still believes it leads epoch 1
        zombie_port = cluster.nodes[1].port
        code = asyncio.run(_produce_raw(zombie_port, b"zombie-write", timeout_ms=500))
        assert code == ErrorCode.REQUEST_TIMED_OUT  # no follower fetches from it: no ack
        # Clients that ask the zombie for metadata are sent back to it (its view
        # is stale, as a Kafka zombie's is); these ask the live side.
        live = ",".join(f"127.0.0.1:{cluster.nodes[n].port}" for n in (2, 3))
        after = _produce(live, "all", [b"after-%d" % i for i in range(10)])
        cluster.isolated.discard(1)
        cluster.publish()  # the zombie learns epoch 2, truncates, follows
        cluster.wait_for_isr(TOPIC, {1, 2, 3})
        _produce(cluster.bootstrap, "all", [b"last"])
    finally:
        cluster.stop_all()
    logs = [_log_bytes(tmp_path / f"broker{n}" / f"{TOPIC}-0") for n in (1, 2, 3)]
    assert logs[0] == logs[1] == logs[2]
    stored = _values_by_offset(logs[0])
    assert b"zombie-write" not in stored.values()
    for offset, value in {**committed.by_offset, **after.by_offset}.items():
        assert stored[offset] == value
