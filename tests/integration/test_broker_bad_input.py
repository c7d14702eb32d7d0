"""Garbage on the broker port: closed connections or error responses, never a crash or a
damaged log."""

from __future__ import annotations

import random
import shutil
import socket
import struct
import subprocess

import pytest

from harness.broker_process import BrokerProcess
from harness.wait import wait_for
from log_engine.protocol import ApiKey, decode_response, encode_request
from log_engine.records import Record, build_batch

KCAT = shutil.which("kcat") or "kcat"


def roundtrip(port: int, frame: bytes, timeout_s: float = 5.0) -> bytes:
    """Send raw bytes; return what comes back before the broker closes (or times out)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(frame)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (TimeoutError, ConnectionResetError):
            pass
    return b"".join(chunks)


def request(port: int, api_key: int, version: int, body: dict) -> dict:
    frame = encode_request(api_key, version, 7, "bad-input-test", body)
    reply = roundtrip(port, frame)
    (size,) = struct.unpack(">i", reply[:4])
    correlation_id, decoded = decode_response(api_key, version, reply[4 : 4 + size])
    assert correlation_id == 7
    return decoded


def produce_body(topic: str, records: bytes) -> dict:
    return {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }


def log_end(broker: BrokerProcess, topic: str) -> int:
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    reply = request(broker.port, ApiKey.LIST_OFFSETS, 1, body)
    return reply["topics"][0]["partitions"][0]["offset"]


@pytest.fixture
def seeded_topic(broker: BrokerProcess, topic_name: str) -> str:
    """A topic (auto-created through Metadata) holding values v0..v9."""
    metadata = request(
        broker.port,
        ApiKey.METADATA,
        4,
        {"topics": [{"name": topic_name}], "allow_auto_topic_creation": True},
    )
    assert metadata["topics"][0]["error_code"] == 0
    batch = build_batch([Record(b"k", b"v%d" % i) for i in range(10)])
    reply = request(broker.port, ApiKey.PRODUCE, 3, produce_body(topic_name, batch))
    assert reply["responses"][0]["partition_responses"][0]["error_code"] == 0
    return topic_name


def test_corrupt_crc_is_refused_and_nothing_appended(
    broker: BrokerProcess, seeded_topic: str
) -> None:
    before = log_end(broker, seeded_topic)
    batch = bytearray(build_batch([Record(b"k", b"payload")]))
    batch[-1] ^= 0xFF
    reply = request(broker.port, ApiKey.PRODUCE, 3, produce_body(seeded_topic, bytes(batch)))
    assert reply["responses"][0]["partition_responses"][0]["error_code"] == 2  # CORRUPT_MESSAGE
    assert log_end(broker, seeded_topic) == before


def test_truncated_and_wrong_magic_batches_are_refused(
    broker: BrokerProcess, seeded_topic: str
) -> None:
    before = log_end(broker, seeded_topic)
    good = build_batch([Record(b"k", b"payload")])
    wrong_magic = bytearray(good)
    wrong_magic[16] = 1
    for records in (good[:-5], bytes(wrong_magic), good + good[:30]):
        reply = request(broker.port, ApiKey.PRODUCE, 3, produce_body(seeded_topic, records))
        assert reply["responses"][0]["partition_responses"][0]["error_code"] != 0
    assert log_end(broker, seeded_topic) == before


@pytest.mark.parametrize(
    "frame",
    [
        struct.pack(">i", 200 * 1024 * 1024) + b"\x00" * 16,  # over socket.request.max.bytes
        struct.pack(">i", 100) + b"\x00\x03\x00\x01",  # truncated frame, then EOF
        struct.pack(">ihhi", 10, 999, 0, 1) + b"\x00\x00",  # unknown API key
        struct.pack(">ihhi", 10, 0, 99, 1) + b"\x00\x00",  # unsupported Produce version
        struct.pack(">i", -5),  # negative size
        struct.pack(">ihhih", 12, 3, 1, 1, 200),  # client id longer than the frame
    ],
)
def test_malformed_frames_close_the_connection(broker: BrokerProcess, frame: bytes) -> None:
    assert roundtrip(broker.port, frame) == b""
    assert broker.is_alive()


def test_api_versions_from_the_future_gets_kip511_answer(broker: BrokerProcess) -> None:
    frame = struct.pack(">hhih", ApiKey.API_VERSIONS, 9, 42, -1) + b"\x00"
    reply = roundtrip(broker.port, struct.pack(">i", len(frame)) + frame)
    size, correlation_id, error_code = struct.unpack(">iih", reply[:10])
    assert correlation_id == 42 and error_code == 35
    assert (size, len(reply)) == (len(reply) - 4, 4 + size)


@pytest.mark.slow
def _answers_metadata(broker: BrokerProcess) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as sock:
            frame = encode_request(ApiKey.METADATA, 1, 7, "probe", {"topics": None})
            sock.sendall(frame)
            return len(sock.recv(4)) == 4
    except OSError:
        return False


def test_thousands_of_garbage_connections_leave_broker_and_log_intact(
    broker: BrokerProcess, seeded_topic: str
) -> None:
    rng = random.Random(1234)
    refused = 0
    before = log_end(broker, seeded_topic)
    valid = encode_request(ApiKey.METADATA, 1, 1, "x", {"topics": None})
    for i in range(3000):
        kind = i % 3
        if kind == 0:
            payload = rng.randbytes(rng.randint(1, 200))
        elif kind == 1:  # a valid frame with bytes flipped
            payload = bytearray(valid)
            for _ in range(rng.randint(1, 4)):
                payload[rng.randrange(len(payload))] = rng.randrange(256)
            payload = bytes(payload)
        else:  # a valid frame cut short
            payload = valid[: rng.randrange(1, len(valid))]
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as sock:
            try:
                sock.sendall(payload)
            except (ConnectionResetError, BrokenPipeError):
                refused += 1  # max.connections reached: closed ones are not counted off yet
    assert refused < 3000, "the broker refused every connection"
    assert broker.is_alive()
    # On a loaded machine the broker may still be closing the burst's connections
    # (max.connections=1000): the checks below start once it takes connections again.
    wait_for(lambda: _answers_metadata(broker), "the broker serves again after the burst")
    assert log_end(broker, seeded_topic) == before
    out = subprocess.run(
        [KCAT, "-b", broker.bootstrap, "-C", "-t", seeded_topic, "-e", "-f", "%s\n"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.decode().split() == [f"v{i}" for i in range(10)]
