"""A broker whose ``log.dirs`` fills up, on a real small tmpfs (issue 15, item 1).

The promise checked: every record acknowledged with ``acks=all`` is read back
exactly once, in order, while the disk is full, after space is freed, and
after a kill -9 or a SIGTERM and a restart; a produce the disk cannot take is
answered KAFKA_STORAGE_ERROR (56), to our client and to librdkafka alike.

Each test replays the same scenario (records acknowledged; the disk filled
but for two pages, so the next batch is a short write then ENOSPC; space
freed; more records sent) and checks one of the failures the issue saw.
"""

from __future__ import annotations

import signal
import socket
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import confluent_kafka
import pytest

from harness.broker_process import BrokerProcess
from log_engine.client import SyncConsumer, SyncProducer, TopicPartition
from log_engine.client.sync_admin import SyncAdmin
from log_engine.errors import KafkaError
from log_engine.protocol import ApiKey, decode_response, encode_request
from tests.support.small_fs import SmallFilesystem, mounted_or_fail

FS_BYTES = 16 << 20
TOPIC = "full"
KAFKA_STORAGE_ERROR = 56
NOT_COORDINATOR = 16
READ_TIMEOUT_S = 30.0


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[SmallFilesystem]:
    with mounted_or_fail(tmp_path / "mnt", FS_BYTES) as fs:
        yield fs


@pytest.fixture
def broker(small_fs: SmallFilesystem, tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(small_fs.root / "logs")
    process.log_path = tmp_path / "broker.log"  # off the full disk, so its lines survive
    process.start()
    try:
        yield process
    finally:
        process.stop(signal.SIGKILL)


@dataclass
class Outcome:
    """What the clients were told: the acknowledged values in order, and the error codes."""

    acked: list[bytes] = field(default_factory=list)
    ours: list[int] = field(default_factory=list)
    librdkafka: list[int] = field(default_factory=list)


def our_producer(broker: BrokerProcess) -> SyncProducer:
    return SyncProducer(
        {"bootstrap.servers": broker.bootstrap, "acks": "all", "retries": 0, "linger.ms": 0}
    )


def librdkafka_producer(broker: BrokerProcess) -> confluent_kafka.Producer:
    return confluent_kafka.Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "acks": "all",
            "retries": 0,
            "linger.ms": 0,
            "message.timeout.ms": 20000,
        }
    )


def send_ours(producer: SyncProducer, value: bytes, outcome: Outcome) -> None:
    try:
        producer.send(TOPIC, value, partition=0).result(30)
    except KafkaError as exc:
        outcome.ours.append(exc.errno)
        return
    outcome.acked.append(value)


def send_librdkafka(producer: confluent_kafka.Producer, value: bytes, outcome: Outcome) -> None:
    reports: list[confluent_kafka.KafkaError | None] = []
    producer.produce(TOPIC, value, partition=0, on_delivery=lambda err, _msg: reports.append(err))
    producer.flush(30)
    assert len(reports) == 1, "no delivery report from librdkafka"
    if reports[0] is None:
        outcome.acked.append(value)
    else:
        outcome.librdkafka.append(reports[0].code())


def fill_the_disk_while_producing(broker: BrokerProcess, fs: SmallFilesystem) -> Outcome:
    """Acknowledged records, a full disk, a short write, space freed, more records."""
    SyncAdmin({"bootstrap.servers": broker.bootstrap}).create_topic(TOPIC)
    outcome = Outcome()
    ours, theirs = our_producer(broker), librdkafka_producer(broker)
    try:
        for i in range(30):
            send_ours(ours, b"ours-%03d-" % i + b"o" * 1000, outcome)
            send_librdkafka(theirs, b"rdkafka-%03d-" % i + b"r" * 1000, outcome)
        assert len(outcome.acked) == 60, outcome
        fs.fill()
        fs.free(2 * 4096)
        send_ours(ours, b"torn-" + b"t" * 20_000, outcome)  # part of it fits: a short write
        send_librdkafka(theirs, b"rdkafka-full-" + b"r" * 1000, outcome)
        fs.free()
        for i in range(20):
            send_ours(ours, b"after-%03d-" % i + b"a" * 1000, outcome)
        send_librdkafka(theirs, b"rdkafka-after-" + b"r" * 1000, outcome)
    finally:
        ours.close()
        theirs.flush(5)
    return outcome


def commit_offset(broker: BrokerProcess) -> int:
    """A raw OffsetCommit (v2) to ``__consumer_offsets``; its partition's error code."""
    body = {
        "group_id": "full-disk-group",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {
                "name": TOPIC,
                "partitions": [
                    {"partition_index": 0, "committed_offset": 5, "committed_metadata": ""}
                ],
            }
        ],
    }
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(encode_request(ApiKey.OFFSET_COMMIT, 2, 7, "full-disk-test", body))
        reply = b""
        while len(reply) < 4 or len(reply) < 4 + struct.unpack(">i", reply[:4])[0]:
            chunk = sock.recv(65536)
            assert chunk, "the broker dropped the connection"
            reply += chunk
    _, decoded = decode_response(ApiKey.OFFSET_COMMIT, 2, reply[4:])
    return int(decoded["topics"][0]["partitions"][0]["error_code"])


def read_all(broker: BrokerProcess) -> list[bytes]:
    """Every value of the partition from its start, in order (what a consumer gets)."""
    tp = TopicPartition(TOPIC, 0)
    consumer = SyncConsumer(
        {"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest"}
    )
    try:
        end = consumer.end_offsets([tp])[tp]
        consumer.assign([tp])
        consumer.seek_to_beginning([tp])
        values: list[bytes] = []
        deadline = time.monotonic() + READ_TIMEOUT_S
        while consumer.position(tp) < end and time.monotonic() < deadline:
            values += [record.value or b"" for record in consumer.poll(1.0)]
        return values
    finally:
        consumer.close()


def read_all_librdkafka(broker: BrokerProcess) -> list[bytes]:
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "full-disk-reader", "log_level": 3}
    )
    try:
        tp = confluent_kafka.TopicPartition(TOPIC, 0, confluent_kafka.OFFSET_BEGINNING)
        _, end = consumer.get_watermark_offsets(tp, 10)
        consumer.assign([tp])
        values: list[bytes] = []
        last = -1
        deadline = time.monotonic() + READ_TIMEOUT_S
        while last + 1 < end and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            values.append(message.value())
            last = message.offset()
        return values
    finally:
        consumer.close()


def test_a_write_the_disk_cannot_take_answers_kafka_storage_error(
    broker: BrokerProcess, small_fs: SmallFilesystem
) -> None:
    outcome = fill_the_disk_while_producing(broker, small_fs)
    # The torn write and everything after it until a restart: offline for writes.
    assert outcome.ours == [KAFKA_STORAGE_ERROR] * 21, "a dropped connection instead?"
    assert outcome.librdkafka == [confluent_kafka.KafkaError.KAFKA_STORAGE_ERROR] * 2
    assert commit_offset(broker) == NOT_COORDINATOR  # as Kafka maps a storage error there
    assert broker.is_alive()
    assert "OFFLINE" in broker.log_text()


def test_consumers_read_every_acknowledged_record_after_space_is_freed(
    broker: BrokerProcess, small_fs: SmallFilesystem
) -> None:
    outcome = fill_the_disk_while_producing(broker, small_fs)
    assert read_all(broker) == outcome.acked  # no skip, no stall on a torn batch
    assert read_all_librdkafka(broker) == outcome.acked


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_acknowledged_records_survive_a_restart_on_the_freed_disk(
    broker: BrokerProcess, small_fs: SmallFilesystem, stop: signal.Signals
) -> None:
    outcome = fill_the_disk_while_producing(broker, small_fs)
    broker.stop(stop)
    broker.start()  # a SIGTERM'd broker used to fail here with InvalidMagicError
    assert read_all(broker) == outcome.acked  # kill -9: recovery used to cut acked records

    again = Outcome()
    producer = our_producer(broker)
    try:
        for i in range(20):
            send_ours(producer, b"restarted-%03d" % i, again)
    finally:
        producer.close()
    assert again.ours == [], "the directory is online again after the restart"
    broker.stop(signal.SIGTERM)
    broker.start()
    assert read_all(broker) == outcome.acked + again.acked
    assert read_all_librdkafka(broker) == outcome.acked + again.acked
