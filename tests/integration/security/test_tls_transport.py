"""The broker's own TLS I/O (``tls_transport.py``) against real clients.

Byte-exact round trips of large and many small records over SASL_SSL (the
decrypt loop, the piecewise encrypted file slices), an expired client
certificate on a mutual-TLS listener, and clients that break off mid-way:
each gets a clear refusal and the broker keeps serving.
"""

from __future__ import annotations

import hashlib
import random
import socket
import ssl
import struct
import uuid
from collections.abc import Iterator

import confluent_kafka
import pytest

from harness.broker_process import BrokerProcess
from harness.secured_broker import listener_broker
from harness.tls_certs import TestCA
from harness.wait import wait_for

SCRAM_USERS = "SCRAM-SHA-512=[name=bob,password=bob-secret]"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def sasl_ssl(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    server = ca.issue("localhost", server=True)
    yield from listener_broker(
        tmp_path_factory.mktemp("sasl_ssl"),
        "SASL_SSL",
        **{
            "ssl.keystore.location": str(server.pem),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "sasl.scram.bootstrap.users": SCRAM_USERS,
            "message.max.bytes": str(2 << 20),
        },
    )


@pytest.fixture(scope="module")
def mutual_tls(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    server = ca.issue("localhost", server=True)
    yield from listener_broker(
        tmp_path_factory.mktemp("ssl"),
        "SSL",
        **{
            "ssl.keystore.location": str(server.pem),
            "ssl.truststore.location": str(ca.cert),
            "ssl.client.auth": "required",
        },
    )


def _client_conf(broker: BrokerProcess, ca: TestCA) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(ca.cert),
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "bob",
        "sasl.password": "bob-secret",
    }


def _produce(conf: dict[str, str], topic: str, values: list[bytes]) -> None:
    producer = confluent_kafka.Producer(
        {**conf, "message.max.bytes": str(2 << 20), "linger.ms": "5"}
    )
    for value in values:
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(60) == 0


def _consume(conf: dict[str, str], topic: str, count: int) -> list[bytes]:
    consumer = confluent_kafka.Consumer(
        {
            **conf,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "fetch.message.max.bytes": str(2 << 20),
        }
    )
    consumer.subscribe([topic])
    received: list[bytes] = []
    try:
        for _ in range(600):
            for message in consumer.consume(1000, timeout=0.5):
                assert message.error() is None, message.error()
                received.append(message.value())
            if len(received) >= count:
                break
    finally:
        consumer.close()
    return received


def _digest(values: list[bytes]) -> list[str]:
    return [hashlib.sha256(v).hexdigest() for v in values]


def test_large_and_small_records_round_trip_byte_exact(
    sasl_ssl: BrokerProcess, ca: TestCA
) -> None:
    # Sizes across TLS record (16 KiB), receive buffer (64 KiB), read (256 KiB)
    # and encrypted-piece (256 KiB) boundaries, and thousands of tiny records
    # (librdkafka then sends many small TLS records per request).
    rng = random.Random(19)
    sizes = [1, 16383, 16384, 16385, 65535, 65536, 262143, 262144, 262145, 1 << 20]
    sizes += [rng.randrange(1, 1 << 20) for _ in range(30)]
    values = [rng.randbytes(size) for size in sizes]
    values += [rng.randbytes(rng.randrange(0, 200)) for _ in range(20_000)]
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    conf = _client_conf(sasl_ssl, ca)
    _produce(conf, topic, values)
    assert _digest(_consume(conf, topic, len(values))) == _digest(values)


def test_expired_client_certificate_is_refused_and_logged(
    mutual_tls: BrokerProcess, ca: TestCA
) -> None:
    expired = ca.issue("old-alice", expired=True)
    context = ssl.create_default_context(cafile=str(ca.cert))
    context.load_cert_chain(str(expired.cert), str(expired.key))
    with (
        socket.create_connection(("127.0.0.1", mutual_tls.port), timeout=10) as raw,
        pytest.raises((ssl.SSLError, ConnectionError)),
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        # TLS 1.3: the client learns of the refusal at its first read
        tls.sendall(struct.pack(">i", 10) + struct.pack(">hhih", 18, 0, 1, -1))
        assert tls.recv(4096) == b""
    wait_for(
        lambda: "certificate has expired" in mutual_tls.log_text(),
        "the broker logging the expired certificate",
    )
    log = mutual_tls.log_text()
    assert "failed authentication with 127.0.0.1:" in log
    # and the broker still serves a valid certificate
    valid = ca.issue("alice")
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": mutual_tls.bootstrap,
            "security.protocol": "SSL",
            "ssl.ca.location": str(ca.cert),
            "ssl.certificate.location": str(valid.cert),
            "ssl.key.location": str(valid.key),
        }
    )
    producer.produce("after-expired", b"ok")
    assert producer.flush(30) == 0


def test_clients_breaking_off_leave_the_broker_serving(
    sasl_ssl: BrokerProcess, ca: TestCA
) -> None:
    context = ssl.create_default_context(cafile=str(ca.cert))
    for _ in range(20):
        # handshake done, half a frame sent, then gone
        with (
            socket.create_connection(("127.0.0.1", sasl_ssl.port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="localhost") as tls,
        ):
            tls.sendall(struct.pack(">i", 1000) + b"\x00" * 10)
        # a ClientHello cut short
        with socket.create_connection(("127.0.0.1", sasl_ssl.port), timeout=10) as raw:
            raw.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    conf = _client_conf(sasl_ssl, ca)
    topic = f"after-{uuid.uuid4().hex[:8]}"
    _produce(conf, topic, [b"still", b"here"])
    assert _consume(conf, topic, 2) == [b"still", b"here"]
    assert "Traceback" not in sasl_ssl.log_text()
