"""Re-authentication (KIP-368) against a broker process with
``connections.max.reauth.ms=2000``.

Real clients keep working past several session lifetimes (confluent-kafka's
librdkafka and Sluice's own client re-authenticate on their connections); a
client that does not re-authenticate, one that re-authenticates as another
user or with another mechanism, and one whose password changed meanwhile are
disconnected. The raw client speaks Sluice's protocol codec over a socket.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from prometheus_client.parser import text_string_to_metric_families
from scramp import ScramClient

from harness.broker_process import BrokerProcess, free_port
from log_engine.client import ClientConfig, SyncAdmin, SyncConsumer, SyncProducer, TopicPartition
from log_engine.client.connection import BrokerConnection
from log_engine.errors import ErrorCode, KafkaError
from log_engine.protocol import ApiKey, decode_response, encode_request

LIFETIME_MS = 2000
RUN_S = 7.0  # more than three session lifetimes
LISTENER = "SASL_PLAINTEXT"
SCRAM = "SCRAM-SHA-512"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="alice" password="alice-secret" user_alice="alice-secret";'
)
SCRAM_USERS = ";".join(
    f"{SCRAM}=[name={user},password={user}-secret]"
    for user in ("admin", "alice", "bob", "carol", "dave")
)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    root: Path = tmp_path_factory.mktemp("reauth")
    port, metrics_port = free_port(), free_port()
    process = BrokerProcess(
        root / "data",
        port=port,
        listeners=f"{LISTENER}://127.0.0.1:{port}",
        **{
            "listener.security.protocol.map": f"{LISTENER}:{LISTENER}",
            "sasl.enabled.mechanisms": f"{SCRAM},PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            "sasl.scram.bootstrap.users": SCRAM_USERS,
            "connections.max.reauth.ms": str(LIFETIME_MS),
            "connection.failed.authentication.delay.ms": "0",
            "metrics.listeners": f"http://127.0.0.1:{metrics_port}",
        },
    )
    process.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"  # type: ignore[attr-defined]
    process.start()
    try:
        yield process
    except BaseException:
        print(process.log_text())
        raise
    finally:
        assert process.stop() == 0, process.log_text()


def _counter(broker: BrokerProcess, name: str) -> float:
    """A ``kafka_server_socket_server_metrics_<name>_total`` of the SASL listener."""
    url: str = broker.metrics_url  # type: ignore[attr-defined]
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    wanted = f"kafka_server_socket_server_metrics_{name}_total"
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == wanted and sample.labels.get("listener") == LISTENER:
                return float(sample.value)
    raise AssertionError(f"{wanted}{{listener={LISTENER!r}}} not in /metrics")


class Counters:
    """The re-authentication counters now; :meth:`since` gives what changed."""

    NAMES = ("successful_reauthentication", "failed_reauthentication", "expired_connections_killed")

    def __init__(self, broker: BrokerProcess) -> None:
        self.broker = broker
        self.start = {name: _counter(broker, name) for name in self.NAMES}

    def since(self) -> dict[str, float]:
        return {n: _counter(self.broker, n) - self.start[n] for n in self.NAMES}


def _sasl_conf(broker: BrokerProcess, user: str) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": LISTENER,
        "sasl.mechanism": SCRAM,
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
    }


# -- (a) confluent-kafka --------------------------------------------------------------


def test_confluent_kafka_keeps_producing_and_consuming_across_reauthentications(
    broker: BrokerProcess,
) -> None:
    counters = Counters(broker)
    topic = f"reauth-ck-{uuid.uuid4().hex[:8]}"
    errors: list[confluent_kafka.KafkaError] = []
    conf = {**_sasl_conf(broker, "alice"), "error_cb": errors.append}
    producer = confluent_kafka.Producer({**conf, "linger.ms": 5})
    consumer = confluent_kafka.Consumer(
        {**conf, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    sent: list[bytes] = []
    received: list[bytes] = []
    delivery_errors: list[Any] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            delivery_errors.append(err)

    try:
        deadline = time.monotonic() + RUN_S
        while time.monotonic() < deadline:
            value = f"v{len(sent)}".encode()
            producer.produce(topic, value, on_delivery=delivered)
            sent.append(value)
            producer.poll(0)
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                received.append(message.value())
        assert producer.flush(30) == 0
        for _ in range(100):
            if len(received) >= len(sent):
                break
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                received.append(message.value())
        # read before closing: while closing, librdkafka may send one last Metadata
        # on an idle connection whose session expired (the broker closes it then)
        changed = counters.since()
    finally:
        consumer.close()
    assert errors == [] and delivery_errors == []
    assert received == sent
    assert changed["successful_reauthentication"] >= 2, changed
    assert changed["failed_reauthentication"] == 0 and changed["expired_connections_killed"] == 0


# -- (b) Sluice's client ---------------------------------------------------------------


def test_our_client_keeps_producing_and_consuming_across_reauthentications(
    broker: BrokerProcess,
) -> None:
    counters = Counters(broker)
    settings = _sasl_conf(broker, "bob")
    topic = f"reauth-ours-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    sent: list[bytes] = []
    received: list[bytes] = []
    with SyncProducer(settings) as producer:
        producer.send(topic, b"first").result(timeout=30)
        sent.append(b"first")
        consumer = SyncConsumer(settings)
        try:
            consumer.assign([tp])
            consumer.seek(tp, 0)
            deadline = time.monotonic() + RUN_S
            while time.monotonic() < deadline:
                value = f"v{len(sent)}".encode()
                producer.send(topic, value).result(timeout=30)
                sent.append(value)
                received += [r.value for r in consumer.poll(0.1)]
            for _ in range(50):
                if len(received) >= len(sent):
                    break
                received += [r.value for r in consumer.poll(0.2)]
        finally:
            consumer.close()
    assert received == sent
    changed = counters.since()
    assert changed["successful_reauthentication"] >= 2, changed
    assert changed["failed_reauthentication"] == 0
    # by user, not by counter: the previous test's clients may still be closing
    assert "SASL session of User:bob expired" not in broker.log_text()


# -- (c), (d): a raw client ------------------------------------------------------------


class RawClient:
    """One socket speaking Sluice's protocol codec, one request at a time."""

    def __init__(self, broker: BrokerProcess) -> None:
        self.sock = socket.create_connection(("127.0.0.1", broker.port), timeout=15)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def request(self, api_key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.correlation_id += 1
        self.sock.sendall(encode_request(api_key, version, self.correlation_id, "raw", body))
        frame = self._read_frame()
        assert frame is not None, f"the broker closed the connection, no {api_key.name} answer"
        correlation_id, answer = decode_response(api_key, version, frame)
        assert correlation_id == self.correlation_id
        return answer

    def closed_by_broker(self) -> bool:
        """Whether the broker closed the connection (EOF before any answer)."""
        return self._read_frame() is None

    def _read_frame(self) -> bytes | None:
        head = self.sock.recv(4, socket.MSG_WAITALL)
        if len(head) < 4:
            return None
        (size,) = struct.unpack(">i", head)
        return self.sock.recv(size, socket.MSG_WAITALL)

    def handshake(self, mechanism: str) -> dict[str, Any]:
        return self.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism})

    def authenticate(self, token: bytes) -> dict[str, Any]:
        return self.request(ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": token})

    def scram_login(self, user: str, password: str) -> dict[str, Any]:
        """SaslHandshake + the SCRAM exchange; the last SaslAuthenticate answer."""
        assert self.handshake(SCRAM)["error_code"] == 0
        scram = ScramClient([SCRAM], user, password)
        first = self.authenticate(scram.get_client_first().encode())
        assert first["error_code"] == 0, first
        scram.set_server_first(first["auth_bytes"].decode())
        final = self.authenticate(scram.get_client_final().encode())
        if final["error_code"] == 0:
            scram.set_server_final(final["auth_bytes"].decode())
        return final

    def metadata(self) -> dict[str, Any]:
        return self.request(ApiKey.METADATA, 1, {"topics": []})


@pytest.fixture
def raw(broker: BrokerProcess) -> Iterator[RawClient]:
    client = RawClient(broker)
    yield client
    client.close()


def test_a_client_that_does_not_reauthenticate_is_disconnected_after_expiry(
    broker: BrokerProcess, raw: RawClient
) -> None:
    counters = Counters(broker)
    answer = raw.scram_login("carol", "carol-secret")
    assert answer["error_code"] == 0
    assert answer["session_lifetime_ms"] == LIFETIME_MS
    assert raw.metadata()["brokers"]  # served while the session lasts
    time.sleep(LIFETIME_MS / 1000 + 0.5)
    raw.sock.sendall(encode_request(ApiKey.METADATA, 1, 99, "raw", {"topics": []}))
    assert raw.closed_by_broker()
    assert counters.since()["expired_connections_killed"] == 1
    assert "SASL session of User:carol expired" in broker.log_text()


def test_reauthentication_after_expiry_keeps_the_connection(
    broker: BrokerProcess, raw: RawClient
) -> None:
    counters = Counters(broker)
    assert raw.scram_login("carol", "carol-secret")["error_code"] == 0
    time.sleep(LIFETIME_MS / 1000 + 0.5)
    again = raw.scram_login("carol", "carol-secret")
    assert again["error_code"] == 0 and again["session_lifetime_ms"] == LIFETIME_MS
    assert raw.metadata()["brokers"]
    assert counters.since()["successful_reauthentication"] == 1


def test_reauthenticating_as_another_user_is_refused_and_disconnected(
    broker: BrokerProcess, raw: RawClient
) -> None:
    counters = Counters(broker)
    assert raw.scram_login("alice", "alice-secret")["error_code"] == 0
    assert raw.metadata()["brokers"]
    answer = raw.scram_login("bob", "bob-secret")  # bob's own, correct password
    assert answer["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer["error_message"] == (
        "Cannot change principals during re-authentication from User.alice: User.bob"
    )
    assert raw.closed_by_broker()
    assert counters.since()["failed_reauthentication"] == 1
    log = broker.log_text()
    assert "failed re-authentication" in log and "bob-secret" not in log


def test_reauthenticating_with_another_mechanism_is_refused_and_disconnected(
    broker: BrokerProcess, raw: RawClient
) -> None:
    assert raw.scram_login("alice", "alice-secret")["error_code"] == 0
    answer = raw.handshake("PLAIN")  # the same user has a PLAIN password too
    assert answer["error_code"] == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert answer["mechanisms"] == [SCRAM]
    assert raw.closed_by_broker()
    assert "not supported for re-authentication of mechanism 'SCRAM-SHA-512'" in (
        broker.log_text()
    )


@pytest.mark.parametrize(
    ("api_key", "body"),
    [(ApiKey.METADATA, {"topics": []}), (ApiKey.API_VERSIONS, {})],  # Kafka refuses both
)
def test_other_requests_during_reauthentication_close_the_connection(
    broker: BrokerProcess, raw: RawClient, api_key: ApiKey, body: dict[str, Any]
) -> None:
    assert raw.scram_login("alice", "alice-secret")["error_code"] == 0
    assert raw.handshake(SCRAM)["error_code"] == 0
    raw.sock.sendall(encode_request(api_key, 1, 99, "raw", body))
    assert raw.closed_by_broker()
    assert f"{api_key.name} (api key {int(api_key)}) during SASL re-authentication" in (
        broker.log_text()
    )


def test_api_versions_after_the_handshake_of_a_first_login_closes_the_connection(
    broker: BrokerProcess, raw: RawClient
) -> None:
    assert raw.request(ApiKey.API_VERSIONS, 1, {})["error_code"] == 0  # before: served
    assert raw.handshake(SCRAM)["error_code"] == 0
    raw.sock.sendall(encode_request(ApiKey.API_VERSIONS, 1, 99, "raw", {}))
    assert raw.closed_by_broker()
    assert "API_VERSIONS (api key 18) during SASL authentication" in broker.log_text()


# -- (e) a password changed under a live connection -------------------------------------


def test_reauthentication_with_the_old_password_after_a_change_fails_and_closes(
    broker: BrokerProcess,
) -> None:
    counters = Counters(broker)
    config = ClientConfig.from_mapping(_sasl_conf(broker, "dave"))
    new_password = f"dave-new-{uuid.uuid4().hex[:6]}"

    async def run() -> None:
        conn = await BrokerConnection.open("127.0.0.1", broker.port, config)
        try:
            await conn.send(ApiKey.METADATA, {"topics": []})
            admin = SyncAdmin(_sasl_conf(broker, "admin"))
            try:
                await asyncio.to_thread(
                    admin.upsert_user_scram_credential, "dave", SCRAM, new_password
                )
            finally:
                admin.close()
            await asyncio.sleep(LIFETIME_MS / 1000)  # past the re-authentication point
            with pytest.raises(KafkaError) as failure:
                await conn.send(ApiKey.METADATA, {"topics": []})
            assert failure.value.errno == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert "during re-authentication due to invalid credentials" in str(failure.value)
            assert conn.closed
        finally:
            conn.close()

    asyncio.run(run())
    assert counters.since()["failed_reauthentication"] == 1
    log = broker.log_text()
    assert "failed re-authentication" in log and "'dave'" in log
    assert "dave-secret" not in log and new_password not in log
