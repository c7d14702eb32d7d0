"""TLS and SASL on the broker with real clients (issue 19, first round).

One broker per listener kind: SASL_SSL (PLAIN, SCRAM-SHA-256/512), SASL_PLAINTEXT
(kafka-python, the 1,000 bad logins) and SSL with ``ssl.client.auth=required``
(mutual TLS). Certificates come from a throwaway CA made with ``cryptography``.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import socket
import ssl
import struct
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import confluent_kafka.admin
import kafka
import pytest

from harness.broker_process import BrokerProcess
from harness.secured_broker import confluent_roundtrip, listener_broker, our_roundtrip
from harness.tls_certs import Issued, TestCA
from log_engine.broker.security import ListenerSecurity
from log_engine.broker.security.connection_auth import tls_principal
from log_engine.client import ClientConfig, SyncProducer
from log_engine.client.connection import BrokerConnection
from log_engine.client.security import SslAuthenticationError
from log_engine.errors import KafkaError

KCAT = shutil.which("kcat") or "kcat"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" '
    'user_alice="alice-secret";'
)
SCRAM_USERS = (
    "SCRAM-SHA-512=[name=bob,password=bob-secret] "
    "SCRAM-SHA-256=[name=carol,password=carol-secret]"
)


class Pki:
    def __init__(self, root: Path) -> None:
        self.ca = TestCA(root / "ca")
        self.broker: Issued = self.ca.issue("localhost", server=True)
        self.alice: Issued = self.ca.issue("alice")
        self.stranger_ca = TestCA(root / "stranger", "Stranger CA")
        self.mallory: Issued = self.stranger_ca.issue("mallory")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def sasl_ssl(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from listener_broker(
        tmp_path_factory.mktemp("sasl_ssl"),
        "SASL_SSL",
        **{
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki.broker.pem),
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
            "sasl.scram.bootstrap.users": SCRAM_USERS,
        },
    )


@pytest.fixture(scope="module")
def sasl_plaintext(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from listener_broker(
        tmp_path_factory.mktemp("sasl_plaintext"),
        "SASL_PLAINTEXT",
        **{
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            "sasl.scram.bootstrap.users": SCRAM_USERS,
            "connection.failed.authentication.delay.ms": "0",
        },
    )


@pytest.fixture(scope="module")
def mutual_tls(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from listener_broker(
        tmp_path_factory.mktemp("ssl"),
        "SSL",
        **{
            "ssl.keystore.certificate.chain": pki.broker.cert.read_text(),
            "ssl.keystore.key": pki.broker.key.read_text(),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki.ca.cert),
            "ssl.client.auth": "required",
        },
    )


def _ssl_conf(broker: BrokerProcess, pki: Pki, mechanism: str, user: str, password: str) -> dict:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(pki.ca.cert),
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }


@pytest.mark.parametrize(
    ("mechanism", "user", "password"),
    [("SCRAM-SHA-512", "bob", "bob-secret"), ("PLAIN", "alice", "alice-secret")],
)
def test_confluent_kafka_over_sasl_ssl(
    sasl_ssl: BrokerProcess, pki: Pki, mechanism: str, user: str, password: str
) -> None:
    conf = _ssl_conf(sasl_ssl, pki, mechanism, user, password)
    assert confluent_roundtrip(conf) == [f"v{i}".encode() for i in range(5)]


def test_kcat_over_sasl_ssl_scram(sasl_ssl: BrokerProcess, pki: Pki) -> None:
    topic = f"kcat-{uuid.uuid4().hex[:8]}"
    common = [
        KCAT, "-b", sasl_ssl.bootstrap,
        "-X", "security.protocol=SASL_SSL",
        "-X", f"ssl.ca.location={pki.ca.cert}",
        "-X", "sasl.mechanisms=SCRAM-SHA-512",
        "-X", "sasl.username=bob",
        "-X", "sasl.password=bob-secret",
    ]  # fmt: skip
    subprocess.run([*common, "-P", "-t", topic], input=b"one\ntwo\n", check=True, timeout=60)
    out = subprocess.run(
        [*common, "-C", "-t", topic, "-o", "beginning", "-e", "-q"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.split() == [b"one", b"two"]


def test_wrong_password_is_a_clear_auth_error_and_not_logged(
    sasl_ssl: BrokerProcess, pki: Pki
) -> None:
    errors: list[confluent_kafka.KafkaError] = []
    conf = {
        **_ssl_conf(sasl_ssl, pki, "SCRAM-SHA-512", "bob", "not-bobs-password-42"),
        "error_cb": errors.append,
    }
    producer = confluent_kafka.Producer(conf)
    for _ in range(40):
        producer.poll(0.25)
        if errors:
            break
    assert any(e.code() == confluent_kafka.KafkaError._AUTHENTICATION for e in errors), errors
    assert any("invalid credentials" in e.str() for e in errors), errors
    log = sasl_ssl.log_text()
    assert "failed authentication" in log and "'bob'" in log
    assert "not-bobs-password-42" not in log


def test_our_client_over_sasl_ssl_scram_sha_256(sasl_ssl: BrokerProcess, pki: Pki) -> None:
    settings = {
        "bootstrap.servers": sasl_ssl.bootstrap,
        "security.protocol": "SASL_SSL",
        "ssl.truststore.location": str(pki.ca.cert),  # the Java name
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        'required username="carol" password="carol-secret";',
    }
    assert our_roundtrip(settings, b"secret payload")[:1] == [b"secret payload"]


def _open(config: ClientConfig) -> None:
    async def run() -> None:
        (host, port), = config.addresses()
        conn = await BrokerConnection.open(host, port, config)
        conn.close()

    asyncio.run(run())


def test_our_client_wrong_password_and_unknown_ca(sasl_ssl: BrokerProcess, pki: Pki) -> None:
    wrong = ClientConfig.from_mapping(
        _ssl_conf(sasl_ssl, pki, "SCRAM-SHA-512", "bob", "nope")
    )
    with pytest.raises(KafkaError, match="invalid credentials with SASL mechanism SCRAM-SHA-512"):
        _open(wrong)
    stranger = ClientConfig.from_mapping(
        {**_ssl_conf(sasl_ssl, pki, "SCRAM-SHA-512", "bob", "bob-secret"),
         "ssl.ca.location": str(pki.stranger_ca.cert)}
    )  # fmt: skip
    with pytest.raises(SslAuthenticationError, match="CERTIFICATE_VERIFY_FAILED"):
        _open(stranger)


def test_plaintext_client_on_tls_port_fails_cleanly(sasl_ssl: BrokerProcess, pki: Pki) -> None:
    # An ApiVersions v0 request in clear text: the TLS server sees garbage and hangs up.
    frame = struct.pack(">hhih", 18, 0, 1, 4) + b"test"
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", sasl_ssl.port), timeout=10) as sock:
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            data = sock.recv(4096)
            assert not data.startswith(struct.pack(">i", 1)), data  # never a Kafka answer
    errors: list[confluent_kafka.KafkaError] = []
    admin = confluent_kafka.admin.AdminClient(
        {"bootstrap.servers": sasl_ssl.bootstrap, "error_cb": errors.append}
    )
    with pytest.raises(confluent_kafka.KafkaException):
        admin.list_topics(timeout=3)
    # the broker is fine: a proper client still works
    conf = _ssl_conf(sasl_ssl, pki, "PLAIN", "admin", "admin-secret")
    assert confluent_kafka.admin.AdminClient(conf).list_topics(timeout=20).brokers


def test_request_before_authentication_closes_the_connection(
    sasl_plaintext: BrokerProcess,
) -> None:
    metadata_v0 = struct.pack(">hhih", 3, 0, 7, 4) + b"test" + struct.pack(">i", 0)
    with socket.create_connection(("127.0.0.1", sasl_plaintext.port), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(metadata_v0)) + metadata_v0)
        assert sock.recv(4096) == b""
    assert "METADATA (api key 3) before SASL authentication" in sasl_plaintext.log_text()


@pytest.mark.parametrize(("mechanism", "user"), [("PLAIN", "alice"), ("SCRAM-SHA-256", "carol")])
def test_kafka_python_over_sasl_plaintext(
    sasl_plaintext: BrokerProcess, mechanism: str, user: str
) -> None:
    topic = f"kp-{uuid.uuid4().hex[:8]}"
    conf = {
        "bootstrap_servers": sasl_plaintext.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": f"{user}-secret",
    }
    producer = kafka.KafkaProducer(**conf)
    producer.send(topic, b"hello").get(timeout=30)
    producer.close()
    consumer = kafka.KafkaConsumer(
        topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **conf
    )
    try:
        values = [m.value for m in itertools.islice(consumer, 1)]  # stops at the first
    finally:
        consumer.close()
    assert values == [b"hello"]


def test_a_thousand_failed_logins_leave_the_broker_responsive(
    sasl_plaintext: BrokerProcess,
) -> None:
    bad = ClientConfig.from_mapping(
        {
            "bootstrap.servers": sasl_plaintext.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "carol",
            "sasl.password": "guess",
        }
    )

    async def attempt(host: str, port: int, gate: asyncio.Semaphore) -> bool:
        async with gate:
            try:
                conn = await BrokerConnection.open(host, port, bad)
            except KafkaError as exc:
                return "invalid credentials" in str(exc)
            conn.close()
            return False

    async def hammer() -> list[bool]:
        (host, port), = bad.addresses()
        gate = asyncio.Semaphore(20)
        return await asyncio.gather(*(attempt(host, port, gate) for _ in range(1000)))

    assert all(asyncio.run(hammer()))
    good = {**bad.model_dump(by_alias=True), "sasl.password": "carol-secret"}
    good = {k: v for k, v in good.items() if v is not None}
    _open(ClientConfig.from_mapping(good))
    assert sasl_plaintext.log_text().count("failed authentication") >= 1000
    assert "guess" not in sasl_plaintext.log_text()


def test_mutual_tls(mutual_tls: BrokerProcess, pki: Pki) -> None:
    base = {
        "bootstrap.servers": mutual_tls.bootstrap,
        "security.protocol": "SSL",
        "ssl.ca.location": str(pki.ca.cert),
    }
    with_cert = {
        **base,
        "ssl.certificate.location": str(pki.alice.cert),
        "ssl.key.location": str(pki.alice.key),
    }
    assert confluent_roundtrip(with_cert) == [f"v{i}".encode() for i in range(5)]
    _open(ClientConfig.from_mapping({**base, "ssl.keystore.location": str(pki.alice.pem)}))
    for refused in (
        base,  # no client certificate
        {**base, "ssl.certificate.location": str(pki.mallory.cert),
         "ssl.key.location": str(pki.mallory.key)},  # signed by a CA the broker does not trust
    ):  # fmt: skip
        with pytest.raises(KafkaError):
            _open(ClientConfig.from_mapping(refused))


def test_mutual_tls_principal_is_the_certificate_subject(pki: Pki, tmp_path: Path) -> None:
    security = ListenerSecurity.build(
        "SSL",
        "SSL",
        {
            "ssl.keystore.location": str(pki.broker.pem),
            "ssl.truststore.location": str(pki.ca.cert),
            "ssl.client.auth": "required",
        },
        tmp_path,
    )
    seen: list[str | None] = []

    async def run() -> None:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(tls_principal(writer.get_extra_info("peercert")))
            writer.close()

        assert security.ssl_context is not None
        server = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=security.ssl_context)
        port = server.sockets[0].getsockname()[1]
        client = ssl.create_default_context(cafile=str(pki.ca.cert))
        client.load_cert_chain(str(pki.alice.cert), str(pki.alice.key))
        _, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client, server_hostname="localhost"
        )
        await asyncio.sleep(0.2)
        writer.close()
        server.close()

    asyncio.run(run())
    assert seen == ["User:CN=alice,O=Sluice Tests,C=DE"]


def test_scram_users_managed_with_confluent_admin_client(sasl_ssl: BrokerProcess, pki: Pki) -> None:
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    admin = confluent_kafka.admin.AdminClient(
        _ssl_conf(sasl_ssl, pki, "SCRAM-SHA-512", "bob", "bob-secret")
    )
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
    for future in admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion("dave", info, b"dave-secret")]
    ).values():
        future.result(timeout=30)
    described = admin.describe_user_scram_credentials(["dave"])["dave"].result(timeout=30)
    assert [(c.mechanism, c.iterations) for c in described.scram_credential_infos] == [
        (ScramMechanism.SCRAM_SHA_512, 8192)
    ]
    conf = _ssl_conf(sasl_ssl, pki, "SCRAM-SHA-512", "dave", "dave-secret")
    assert confluent_kafka.admin.AdminClient(conf).list_topics(timeout=20).brokers
    assert "dave-secret" not in sasl_ssl.log_text()
    for future in admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion("dave", ScramMechanism.SCRAM_SHA_512)]
    ).values():
        future.result(timeout=30)
    with pytest.raises(KafkaError, match="invalid credentials"):
        _open(ClientConfig.from_mapping(conf))
    with pytest.raises(confluent_kafka.KafkaException, match="does not exist"):
        admin.describe_user_scram_credentials(["dave"])["dave"].result(timeout=30)


def test_anonymous_connections_cannot_manage_scram_users(broker: BrokerProcess) -> None:
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap})
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
    futures = admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion("eve", info, b"eve-secret")]
    )
    with pytest.raises(confluent_kafka.KafkaException, match="authenticated principal"):
        futures["eve"].result(timeout=30)


def test_our_producer_with_a_wrong_password_fails_at_once(sasl_plaintext: BrokerProcess) -> None:
    from log_engine.errors import SaslAuthenticationFailedError

    settings = {
        "bootstrap.servers": sasl_plaintext.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "carol",
        "sasl.password": "wrong",
    }
    with pytest.raises(SaslAuthenticationFailedError, match="invalid credentials"):  # noqa: SIM117
        with SyncProducer(settings) as producer:
            producer.send("anything", b"x").result(timeout=60)


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
    return sock.recv(size, socket.MSG_WAITALL) if size else b""


def test_sasl_handshake_v0_then_bare_tokens(sasl_plaintext: BrokerProcess) -> None:
    handshake_v0 = struct.pack(">hhih", 17, 0, 1, 1) + b"t" + struct.pack(">h", 5) + b"PLAIN"
    api_versions_v0 = struct.pack(">hhih", 18, 0, 2, 1) + b"t"
    with socket.create_connection(("127.0.0.1", sasl_plaintext.port), timeout=10) as sock:
        sock.sendall(_frame(handshake_v0))
        answer = _read_frame(sock)
        assert struct.unpack_from(">ih", answer) == (1, 0)
        sock.sendall(_frame(b"\x00alice\x00alice-secret"))  # bare PLAIN token
        assert _read_frame(sock) == b""  # bare empty answer: authenticated
        sock.sendall(_frame(api_versions_v0))
        assert struct.unpack_from(">ih", _read_frame(sock)) == (2, 0)
