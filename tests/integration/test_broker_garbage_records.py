"""A batch whose CRC is valid but whose records are garbage is refused, as Kafka's broker does.

Before the broker checked records, such a batch was stored and then stopped
every reader of the partition at its offset. Each kind of garbage is produced
over a raw socket with our protocol codec; the answer is INVALID_RECORD (or
CORRUPT_MESSAGE when the compressed stream itself is broken), nothing is
appended, and the records before it stay readable by kcat, kafka-python and
our consumer. A compressed batch that would inflate past the broker's bound
is refused with MESSAGE_TOO_LARGE without being inflated.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, TopicPartition

from harness.broker_process import BrokerProcess
from log_engine.client import SyncConsumer
from log_engine.client import TopicPartition as OurTopicPartition
from log_engine.protocol import ApiKey
from log_engine.records import Compression, Record, build_batch
from log_engine.records.batch import assemble_batch
from log_engine.records.compression import compress
from log_engine.records.varint import write_varint
from tests.integration.test_broker_bad_input import log_end, produce_body, request

KCAT = shutil.which("kcat") or "kcat"
SEEDED = 10
INVALID_RECORD = 87
CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10


def record(
    offset_delta: int, key: bytes | None, value: bytes | None, *, length_bonus: int = 0
) -> bytes:
    """One record's bytes (no headers); ``length_bonus`` lies about its length."""
    body = bytearray(b"\x00\x00")  # attributes, timestampDelta 0
    write_varint(offset_delta, body)
    for field in (key, value):
        write_varint(-1 if field is None else len(field), body)
        body += field or b""
    body += b"\x00"  # no headers
    out = bytearray()
    write_varint(len(body) + length_bonus, out)
    return bytes(out + body)


def batch_of(payload: bytes, count: int, codec: Compression = Compression.NONE) -> bytes:
    """A batch with a correct CRC around ``payload`` declaring ``count`` records."""
    return assemble_batch(
        compress(codec, payload),
        attributes=int(codec),
        last_offset_delta=count - 1,
        base_timestamp=1_700_000_000_000,
        max_timestamp=1_700_000_000_000,
        records_count=count,
    )


def three(key: bytes | None = b"k") -> list[bytes]:
    return [record(i, key, b"bad%d" % i) for i in range(3)]


GARBAGE: dict[str, Callable[[], bytes]] = {
    "count-above-records": lambda: batch_of(b"".join(three()), 4),
    "count-below-records": lambda: batch_of(b"".join(three()), 2),
    "length-overrun": lambda: batch_of(
        b"".join([*three()[:2], record(2, b"k", b"v", length_bonus=40)]), 3
    ),
    "length-short": lambda: batch_of(
        b"".join([record(0, b"k", b"v", length_bonus=-2), *three()[1:]]), 3
    ),
    "offset-delta": lambda: batch_of(b"".join([record(0, b"k", b"a"), record(0, b"k", b"b")]), 2),
    "truncated-varint": lambda: batch_of(b"".join(three()) + b"\x80", 4),
    "garbage-in-lz4": lambda: batch_of(b"".join(three()) + b"\xff" * 9, 3, Compression.LZ4),
    "garbage-in-zstd": lambda: batch_of(b"".join(three())[:-3], 3, Compression.ZSTD),
    # 256 MiB of zeros in a few kB: refused once past the 128 MiB bound, not inflated whole
    "zstd-bomb": lambda: batch_of(b"\x00" * (1 << 28), 1, Compression.ZSTD),
    "undecompressable-gzip": lambda: assemble_batch(
        b"\x1f\x8b not gzip at all",
        attributes=int(Compression.GZIP),
        last_offset_delta=0,
        base_timestamp=0,
        max_timestamp=0,
        records_count=1,
    ),
}


def produce(broker: BrokerProcess, topic: str, records: bytes, version: int = 8) -> dict:
    reply = request(broker.port, ApiKey.PRODUCE, version, produce_body(topic, records))
    return reply["responses"][0]["partition_responses"][0]


def create_topic(broker: BrokerProcess, topic: str, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(30)


def seed(broker: BrokerProcess, topic: str) -> None:
    batch = build_batch([Record(b"k%d" % i, b"v%d" % i) for i in range(SEEDED)])
    assert produce(broker, topic, batch)["error_code"] == 0


def assert_readers_see_the_seeded_records(broker: BrokerProcess, topic: str) -> None:
    expected = [b"v%d" % i for i in range(SEEDED)]
    kcat = subprocess.run(
        [KCAT, "-b", broker.bootstrap, "-C", "-t", topic, "-e", "-f", "%s\n"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert kcat.stdout.split() == expected
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, consumer_timeout_ms=3000)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    assert [m.value for m in consumer] == expected
    consumer.close()
    ours = SyncConsumer({"bootstrap.servers": broker.bootstrap})
    ours.assign([OurTopicPartition(topic, 0)])
    ours.seek(OurTopicPartition(topic, 0), 0)
    received: list[bytes | None] = []
    for _ in range(50):
        received += [r.value for r in ours.poll(0.2)]
        if len(received) >= SEEDED:
            break
    ours.close()
    assert received == expected


@pytest.mark.compat
@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_garbage_records_are_refused_and_readers_keep_reading(
    broker: BrokerProcess, kind: str
) -> None:
    topic_name = f"garbage-records-{kind}"
    create_topic(broker, topic_name)
    seed(broker, topic_name)
    answer = produce(broker, topic_name, GARBAGE[kind]())
    expected = {"undecompressable-gzip": CORRUPT_MESSAGE, "zstd-bomb": MESSAGE_TOO_LARGE}.get(
        kind, INVALID_RECORD
    )
    assert answer["error_code"] == expected, answer
    assert answer["error_message"]
    assert log_end(broker, topic_name) == SEEDED
    # a valid batch afterwards is still accepted at the next offset
    assert produce(broker, topic_name, build_batch([Record(b"k", b"after")]))["base_offset"] == (
        SEEDED
    )
    seed_and_after = SEEDED + 1
    assert log_end(broker, topic_name) == seed_and_after


@pytest.mark.compat
def test_readers_read_past_nothing_after_a_refused_batch(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker, topic_name)
    seed(broker, topic_name)
    for make in GARBAGE.values():
        assert produce(broker, topic_name, make())["error_code"] != 0
    assert log_end(broker, topic_name) == SEEDED
    assert_readers_see_the_seeded_records(broker, topic_name)


def test_record_errors_name_the_bad_record(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name)
    answer = produce(broker, topic_name, GARBAGE["length-overrun"]())
    assert answer["record_errors"][0]["batch_index"] == 2
    assert "record 2" in answer["record_errors"][0]["batch_index_error_message"]


def test_null_key_on_a_compacted_topic_is_invalid_record(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker, topic_name, **{"cleanup.policy": "compact"})
    seed(broker, topic_name)
    keyless = build_batch([Record(b"k", b"a"), Record(None, b"b")])
    answer = produce(broker, topic_name, keyless)
    assert answer["error_code"] == INVALID_RECORD
    assert answer["record_errors"][0]["batch_index"] == 1
    assert log_end(broker, topic_name) == SEEDED
    assert_readers_see_the_seeded_records(broker, topic_name)


def test_a_bad_crc_is_still_reported_as_corrupt(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name)
    bad = bytearray(GARBAGE["length-overrun"]())
    bad[-1] ^= 0xFF
    assert produce(broker, topic_name, bytes(bad))["error_code"] == CORRUPT_MESSAGE


def test_valid_batches_of_every_shape_are_accepted(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker, topic_name)
    shapes = [
        [Record(None, None)],
        [Record(b"k" * 300, b"v" * 20_000, (("h", b"x"), ("h2", None)))] * 3,
        [Record(b"", b"", ())] * 200,
    ]
    for records in shapes:
        for codec in Compression:
            answer = produce(broker, topic_name, build_batch(records, compression=codec))
            assert answer["error_code"] == 0, (codec, answer)
