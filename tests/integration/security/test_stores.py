"""PKCS12 and JKS key and trust stores, and ssl.principal.mapping.rules, with real clients.

The certificates come from a throwaway CA (``cryptography``); the PKCS12 key
stores are written as ``openssl pkcs12 -export`` writes them, the JKS stores and
the PKCS12 trust store by the JDK's keytool. librdkafka (confluent-kafka, kcat)
and Sluice's own client talk to brokers whose listeners load them.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from harness.broker_process import BrokerProcess, free_port
from harness.secured_broker import confluent_roundtrip, our_roundtrip
from harness.tls_certs import (
    Issued,
    TestCA,
    jks_keystore,
    pkcs12_keystore,
    truststore,
)
from log_engine.client import ClientConfig, SyncProducer

KCAT = shutil.which("kcat") or "kcat"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
P12_PASSWORD = "p12-store-secret"
JKS_PASSWORD = "jks-store-secret"
JKS_KEY_PASSWORD = "jks-key-secret"
TRUST_PASSWORD = "trust-store-secret"


class Stores:
    """A CA, a broker and three clients, and their certificates as PEM, PKCS12 and JKS."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ca = TestCA(root / "ca")
        self.broker: Issued = self.ca.issue("localhost", server=True)
        self.alice: Issued = self.ca.issue("alice")
        self.bob: Issued = self.ca.issue("bob")
        self.admin: Issued = self.ca.issue("admin")
        self.outsider: Issued = self.ca.issue("eve", org="Elsewhere")
        self.stranger_ca = TestCA(root / "stranger", "Stranger CA")
        self.mallory: Issued = self.stranger_ca.issue("mallory")
        self.broker_p12 = pkcs12_keystore(self.broker, self.ca, root / "broker.p12", P12_PASSWORD)
        self.broker_jks = jks_keystore(
            self.broker_p12, P12_PASSWORD, root / "broker.jks", JKS_PASSWORD, JKS_KEY_PASSWORD
        )
        self.trust_p12 = truststore(self.ca, root / "trust.p12", TRUST_PASSWORD, "PKCS12")
        self.trust_jks = truststore(self.ca, root / "trust.jks", TRUST_PASSWORD, "JKS")
        self.alice_p12 = pkcs12_keystore(self.alice, self.ca, root / "alice.p12", P12_PASSWORD)
        self.alice_jks = jks_keystore(
            self.alice_p12, P12_PASSWORD, root / "alice.jks", JKS_PASSWORD, JKS_KEY_PASSWORD
        )
        self.mallory_p12 = pkcs12_keystore(
            self.mallory, self.stranger_ca, root / "mallory.p12", P12_PASSWORD
        )
        self.bob_p12 = pkcs12_keystore(self.bob, self.ca, root / "bob.p12", P12_PASSWORD)
        self.admin_p12 = pkcs12_keystore(self.admin, self.ca, root / "admin.p12", P12_PASSWORD)
        self.outsider_p12 = pkcs12_keystore(
            self.outsider, self.ca, root / "outsider.p12", P12_PASSWORD
        )


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Stores:
    return Stores(tmp_path_factory.mktemp("stores"))


def _ssl_broker(root: Path, **settings: str) -> BrokerProcess:
    port = free_port()
    return BrokerProcess(
        root / "data",
        port=port,
        listeners=f"SSL://127.0.0.1:{port}",
        **{"listener.security.protocol.map": "SSL:SSL"},
        **settings,
    )


@pytest.fixture(scope="module")
def pkcs12_broker(
    stores: Stores, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrokerProcess]:
    process = _ssl_broker(
        tmp_path_factory.mktemp("p12"),
        **{
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(stores.broker_p12),
            "ssl.keystore.password": P12_PASSWORD,
        },
    ).start()
    yield process
    assert process.stop() == 0, process.log_text()


@pytest.fixture(scope="module")
def jks_broker(stores: Stores, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = _ssl_broker(
        tmp_path_factory.mktemp("jks"),
        **{
            "ssl.keystore.type": "JKS",
            "ssl.keystore.location": str(stores.broker_jks),
            "ssl.keystore.password": JKS_PASSWORD,
            "ssl.key.password": JKS_KEY_PASSWORD,
        },
    ).start()
    yield process
    assert process.stop() == 0, process.log_text()


@pytest.fixture(scope="module")
def mtls_broker(
    stores: Stores, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrokerProcess]:
    """Mutual TLS, a PKCS12 trust store made by keytool, principals mapped to the CN
    of certificates of O=Sluice Tests (no DEFAULT: other subjects are refused), ACLs on."""
    process = _ssl_broker(
        tmp_path_factory.mktemp("mtls"),
        **{
            "ssl.keystore.type": "JKS",
            "ssl.keystore.location": str(stores.broker_jks),
            "ssl.keystore.password": JKS_PASSWORD,
            "ssl.key.password": JKS_KEY_PASSWORD,
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(stores.trust_p12),
            "ssl.truststore.password": TRUST_PASSWORD,
            "ssl.client.auth": "required",
            "ssl.principal.mapping.rules": "RULE:^CN=(.*?),O=Sluice Tests,C=DE$/$1/U",
            "authorizer.class.name": AUTHORIZER,
            "super.users": "User:ADMIN",
        },
    ).start()
    yield process
    assert process.stop() == 0, process.log_text()


def _librdkafka_p12(broker: BrokerProcess, stores: Stores, p12: Path) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "SSL",
        "ssl.ca.location": str(stores.ca.cert),
        "ssl.keystore.location": str(p12),  # librdkafka: a PKCS#12 file
        "ssl.keystore.password": P12_PASSWORD,
    }


def test_confluent_kafka_talks_to_a_pkcs12_keystore_listener(
    pkcs12_broker: BrokerProcess, stores: Stores
) -> None:
    conf = {
        "bootstrap.servers": pkcs12_broker.bootstrap,
        "security.protocol": "SSL",
        "ssl.ca.location": str(stores.ca.cert),
    }
    assert confluent_roundtrip(conf, 3) == [b"v0", b"v1", b"v2"]
    assert P12_PASSWORD not in pkcs12_broker.log_text()


def test_kcat_talks_to_a_jks_keystore_listener(jks_broker: BrokerProcess, stores: Stores) -> None:
    topic = f"jks-{uuid.uuid4().hex[:8]}"
    common = [KCAT, "-b", jks_broker.bootstrap, "-X", "security.protocol=SSL",
              "-X", f"ssl.ca.location={stores.ca.cert}", "-t", topic]  # fmt: skip
    subprocess.run([*common, "-P"], input=b"one\ntwo\n", check=True, timeout=60)
    out = subprocess.run(
        [*common, "-C", "-o", "beginning", "-c", "2", "-e"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.split() == [b"one", b"two"]
    assert JKS_PASSWORD not in jks_broker.log_text()


def test_our_client_with_pkcs12_and_jks_trust_stores(
    pkcs12_broker: BrokerProcess, stores: Stores
) -> None:
    for store_type, location in (("PKCS12", stores.trust_p12), ("JKS", stores.trust_jks)):
        config = {
            "bootstrap.servers": pkcs12_broker.bootstrap,
            "security.protocol": "SSL",
            "ssl.truststore.type": store_type,
            "ssl.truststore.location": str(location),
            "ssl.truststore.password": TRUST_PASSWORD,
        }
        assert our_roundtrip(config, b"v")[:1] == [b"v"]


def _acl(user: str, topic: str, operation: AclOperation) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, f"User:{user}", "*",
        operation, AclPermissionType.ALLOW,
    )  # fmt: skip


def _produce_error(conf: dict[str, str], topic: str) -> confluent_kafka.KafkaError | None:
    results: list[confluent_kafka.KafkaError | None] = []
    producer = confluent_kafka.Producer(
        {"message.timeout.ms": "15000", "allow.auto.create.topics": "false", **conf}
    )
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: results.append(err))
    producer.flush(30)
    assert len(results) == 1
    return results[0]


def test_mapped_mtls_principals_and_acls(mtls_broker: BrokerProcess, stores: Stores) -> None:
    """CN=admin maps to the super user ADMIN, CN=alice to ALICE (allowed by an ACL on
    that name), CN=bob to BOB (no ACL: refused); the PKCS12 trust store checks them all."""
    admin = AdminClient(_librdkafka_p12(mtls_broker, stores, stores.admin_p12))
    topic = f"mapped-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 1, 1)], request_timeout=20)[topic].result()
    futures = admin.create_acls(
        [
            _acl("ALICE", topic, AclOperation.WRITE),
            _acl("CN=bob,O=Sluice Tests,C=DE", topic, AclOperation.WRITE),
        ],
        request_timeout=20,
    )  # fmt: skip
    for future in futures.values():
        future.result()
    alice = _librdkafka_p12(mtls_broker, stores, stores.alice_p12)
    assert _produce_error(alice, topic) is None
    bob = _librdkafka_p12(mtls_broker, stores, stores.bob_p12)
    error = _produce_error(bob, topic)  # the unmapped name's ACL does not apply
    assert (
        error is not None and error.code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    )
    # Sluice's client with a JKS key store is ALICE too
    ours = {
        "bootstrap.servers": mtls_broker.bootstrap,
        "security.protocol": "SSL",
        "ssl.truststore.location": str(stores.ca.cert),
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": str(stores.alice_jks),
        "ssl.keystore.password": JKS_PASSWORD,
        "ssl.key.password": JKS_KEY_PASSWORD,
    }
    with SyncProducer(ours) as producer:
        producer.send(topic, b"from-jks").result(timeout=30)


def test_a_subject_no_rule_applies_to_is_refused(
    mtls_broker: BrokerProcess, stores: Stores
) -> None:
    outsider = _librdkafka_p12(mtls_broker, stores, stores.outsider_p12)
    error = _produce_error({**outsider, "message.timeout.ms": "3000"}, "anything")
    assert error is not None
    assert "no rule of ssl.principal.mapping.rules" in mtls_broker.log_text()
    assert "CN=eve,O=Elsewhere,C=DE" in mtls_broker.log_text()


def test_mutual_tls_with_our_client_pem_text_and_a_stranger(
    mtls_broker: BrokerProcess, stores: Stores
) -> None:
    """The Java names ssl.keystore.certificate.chain / ssl.keystore.key as PEM text;
    a certificate of another CA (PKCS12) is refused by the PKCS12 trust store."""
    base = {
        "bootstrap.servers": mtls_broker.bootstrap,
        "security.protocol": "SSL",
        "ssl.truststore.location": str(stores.ca.cert),
    }
    text = {
        **base,
        "ssl.keystore.certificate.chain": stores.admin.cert.read_text(),
        "ssl.keystore.key": stores.admin.key.read_text(),
    }
    topic = f"pem-text-{uuid.uuid4().hex[:6]}"
    with SyncProducer(text) as producer:  # ADMIN: a super user
        producer.send(topic, b"v").result(timeout=30)
    stranger = _librdkafka_p12(mtls_broker, stores, stores.mallory_p12)
    error = _produce_error({**stranger, "message.timeout.ms": "3000"}, topic)
    assert error is not None


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"ssl.keystore.type": "PKCS12", "ssl.keystore.password": "not-the-password"},
            "wrong ssl.keystore.password",
        ),
        ({"ssl.keystore.type": "PEM"}, "is a PKCS12 file"),
        ({"ssl.keystore.type": "BKS"}, "one of PEM, PKCS12, JKS"),
        (
            {"ssl.keystore.location": "/nowhere/broker.p12"},
            "cannot read ssl.keystore.location=/nowhere/broker.p12",
        ),
        (
            {"keystore": "trust.p12", "ssl.keystore.password": TRUST_PASSWORD},
            "holds no private key",
        ),
        (
            {"ssl.principal.mapping.rules": "RULE:^CN=(.*?)$/$1/X"},
            "ssl.principal.mapping.rules: cannot parse",
        ),
        ({"ssl.principal.mapping.rules": "RULE:^CN=(.*$/$1/, DEFAULT"}, "bad pattern"),
    ],
)  # fmt: skip
def test_bad_stores_and_rules_stop_the_broker(
    stores: Stores, tmp_path: Path, settings: dict[str, str], expected: str
) -> None:
    settings = dict(settings)
    location = str(stores.root / settings.pop("keystore", "broker.p12"))
    broker = _ssl_broker(
        tmp_path,
        **{"ssl.keystore.location": location, "ssl.keystore.password": P12_PASSWORD, **settings},
    )
    with pytest.raises(RuntimeError, match="exited early"):
        broker.start()
    broker.stop()
    log = broker.log_text()
    assert expected in log
    for secret in (P12_PASSWORD, TRUST_PASSWORD, "not-the-password"):
        assert secret not in log


def test_our_client_refuses_a_bad_store_with_the_config(stores: Stores) -> None:
    base = {"bootstrap.servers": "127.0.0.1:9", "security.protocol": "SSL"}
    with pytest.raises(ValueError, match=r"wrong ssl\.keystore\.password") as caught:
        ClientConfig.from_mapping(
            {
                **base,
                "ssl.keystore.location": str(stores.alice_p12),
                "ssl.keystore.password": "nope-secret",
            }
        )
    assert "nope-secret" not in str(caught.value)
    with pytest.raises(ValueError, match=r"ssl\.truststore\.password"):
        ClientConfig.from_mapping({**base, "ssl.truststore.location": str(stores.trust_jks)})
