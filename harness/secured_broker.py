"""A broker process whose only listener is SASL_SSL (SCRAM-SHA-512), and the client keys
a Kafka Connect user writes to reach it (Java's names: ``ssl.truststore.location``,
``sasl.jaas.config``). Shared by the tests of workers on a secured cluster."""

from __future__ import annotations

import socket
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka

from harness.broker_process import BrokerProcess, free_port
from harness.tls_certs import TestCA
from log_engine.client import SyncConsumer, SyncProducer, TopicPartition

SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="{user}" password="{password}";'
)


def sasl_ssl_broker(data_dir: Path, ca: TestCA, user: str, password: str) -> BrokerProcess:
    """A broker (not started) on one ``SASL_SSL`` listener, ``user`` its bootstrap SCRAM user."""
    port = free_port()
    server = ca.issue("localhost", server=True)
    return BrokerProcess(
        data_dir,
        port=port,
        listeners=f"SASL_SSL://127.0.0.1:{port}",
        **{
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(server.pem),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "sasl.scram.bootstrap.users": f"SCRAM-SHA-512=[name={user},password={password}]",
        },
    )


def sasl_ssl_client_props(ca: TestCA, user: str, password: str) -> dict[str, str]:
    """Worker-level client keys for :func:`sasl_ssl_broker`, as Kafka Connect takes them."""
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": SCRAM_JAAS.format(user=user, password=password),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca.cert),
    }


def listener_broker(root: Path, listener: str, **settings: str) -> Iterator[BrokerProcess]:
    """A fixture body: a broker whose one listener is ``listener`` (``SSL``,
    ``SASL_SSL``, ...) on a free port with ``settings``, started; after the
    yield it is stopped and must exit 0."""
    port = free_port()
    process = BrokerProcess(
        root / "data",
        port=port,
        listeners=f"{listener}://127.0.0.1:{port}",
        **{"listener.security.protocol.map": f"{listener}:{listener}"},
        **settings,
    ).start()
    yield process
    assert process.stop() == 0, process.log_text()


def negotiated(port: int, context: ssl.SSLContext) -> tuple[str, str]:
    """(TLS version, OpenSSL cipher name) that a real handshake with ``context`` to
    ``127.0.0.1:port`` negotiates (the server's certificate names ``localhost``)."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        version, cipher = tls.version(), tls.cipher()
        assert version is not None and cipher is not None
        return version, cipher[0]


def confluent_roundtrip(conf: dict[str, str], count: int = 5) -> list[bytes]:
    """Produce ``v0``..``v<count-1>`` to a new topic with confluent-kafka and read
    them back in a new group, both with ``conf``: the values read."""
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    producer = confluent_kafka.Producer(conf)
    for i in range(count):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer(
        {**conf, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    try:
        for _ in range(60):
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                values.append(message.value() or b"")
            if len(values) == count:
                break
    finally:
        consumer.close()
    return values


def our_roundtrip(settings: dict[str, str], value: bytes) -> list[bytes]:
    """Send ``value`` to a new topic with Sluice's producer and read partition 0 back
    with Sluice's consumer, both with ``settings``: the first records read."""
    topic = f"ours-{uuid.uuid4().hex[:8]}"
    with SyncProducer(settings) as producer:
        producer.send(topic, value).result(timeout=30)
    consumer = SyncConsumer(settings)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        for _ in range(60):
            if records := consumer.poll(0.5):
                return [r.value or b"" for r in records]
        return []
    finally:
        consumer.close()
