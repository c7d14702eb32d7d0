"""ACLs on a real ``sluice broker`` with real clients (issue 19, ACL round).

One SASL_PLAINTEXT broker with PLAIN users (admin is the super user, alice and
bob are not) and ``authorizer.class.name`` set to Kafka's StandardAuthorizer
name. confluent-kafka's AdminClient manages the ACLs; confluent-kafka and kcat
are refused with Kafka's authorization errors.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from harness.broker_process import BrokerProcess, free_port
from log_engine.client import SyncConsumer
from log_engine.errors import KafkaError as LogEngineKafkaError

KCAT = shutil.which("kcat") or "kcat"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" '
    'user_alice="alice-secret" user_bob="bob-secret" user_dave="dave-secret";'
)
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def broker_settings(port: int, **extra: str) -> dict[str, str]:
    return {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "connection.failed.authentication.delay.ms": "0",
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin",
        **extra,
    }


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    port = free_port()
    process = BrokerProcess(
        tmp_path_factory.mktemp("acls") / "data", port=port, **broker_settings(port)
    ).start()
    yield process
    assert process.stop() == 0, process.log_text()


def conf(broker: BrokerProcess, user: str) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
    }


def admin(broker: BrokerProcess, user: str = "admin") -> AdminClient:
    return AdminClient(conf(broker, user))


def topic_acl(
    user: str,
    name: str,
    operation: AclOperation,
    permission: AclPermissionType = AclPermissionType.ALLOW,
    pattern: ResourcePatternType = ResourcePatternType.LITERAL,
    resource: ResourceType = ResourceType.TOPIC,
) -> AclBinding:
    return AclBinding(resource, name, pattern, f"User:{user}", "*", operation, permission)


def create_acls(broker: BrokerProcess, *bindings: AclBinding) -> None:
    client = admin(broker)
    for future in client.create_acls(list(bindings), request_timeout=20).values():
        future.result()


def new_topic(broker: BrokerProcess, partitions: int = 1) -> str:
    name = f"acl-{uuid.uuid4().hex[:8]}"
    client = admin(broker)
    futures = client.create_topics([NewTopic(name, partitions, 1)], request_timeout=20)
    futures[name].result()
    return name


def produce_error(
    broker: BrokerProcess, user: str, topic: str, extra: dict[str, str] | None = None
) -> KafkaError | None:
    """Produce one record as ``user``: the delivery error, or None when delivered."""
    results: list[KafkaError | None] = []
    producer = confluent_kafka.Producer(
        {**conf(broker, user), "message.timeout.ms": "15000", "allow.auto.create.topics": "false",
         **(extra or {})}
    )  # fmt: skip
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: results.append(err))
    producer.flush(30)
    assert len(results) == 1
    return results[0]


def consume_error(
    broker: BrokerProcess, user: str, topic: str, group: str
) -> KafkaError | None:
    """Subscribe as ``user`` in ``group``: the first error, or None after a record."""
    consumer = confluent_kafka.Consumer(
        {**conf(broker, user), "group.id": group, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    try:
        for _ in range(40):
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() == KafkaError._PARTITION_EOF:
                    continue
                return message.error()
            return None
    finally:
        consumer.close()
    raise AssertionError("no record and no error in 20 s")


def test_admin_client_creates_describes_and_deletes_acls(broker: BrokerProcess) -> None:
    client = admin(broker)
    topic = f"adm-{uuid.uuid4().hex[:8]}"
    bindings = [
        topic_acl("alice", topic, AclOperation.READ),
        topic_acl("alice", topic[:4], AclOperation.WRITE, pattern=ResourcePatternType.PREFIXED),
        topic_acl("bob", topic, AclOperation.ALL, AclPermissionType.DENY),
    ]
    for future in client.create_acls(bindings, request_timeout=20).values():
        assert future.result() is None
    alice_only = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, "User:alice", None,
        AclOperation.ANY, AclPermissionType.ANY,
    )  # fmt: skip
    found = client.describe_acls(alice_only, request_timeout=20).result()
    assert set(found) == set(bindings[:2])
    matching = AclBindingFilter(
        ResourceType.TOPIC, topic, ResourcePatternType.MATCH, None, None,
        AclOperation.ANY, AclPermissionType.ANY,
    )  # fmt: skip
    assert set(client.describe_acls(matching, request_timeout=20).result()) == set(bindings)
    deny_filter = AclBindingFilter(
        ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
        AclOperation.ANY, AclPermissionType.DENY,
    )  # fmt: skip
    deleted = client.delete_acls([deny_filter], request_timeout=20)[deny_filter].result()
    assert deleted == [bindings[2]]
    assert set(client.describe_acls(matching, request_timeout=20).result()) == set(bindings[:2])


def test_a_user_without_cluster_alter_cannot_manage_acls(broker: BrokerProcess) -> None:
    binding = topic_acl("bob", "anything", AclOperation.READ)
    client = admin(broker, "bob")
    future = client.create_acls([binding], request_timeout=20)[binding]
    with pytest.raises(confluent_kafka.KafkaException) as caught:
        future.result()
    assert caught.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_produce_without_write_is_topic_authorization_failed(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    error = produce_error(broker, "alice", topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    create_acls(broker, topic_acl("alice", topic, AclOperation.WRITE))
    assert produce_error(broker, "alice", topic) is None


def test_group_join_without_group_read_is_group_authorization_failed(
    broker: BrokerProcess,
) -> None:
    topic = new_topic(broker)
    group = f"g-{topic}"
    create_acls(broker, topic_acl("alice", topic, AclOperation.ALL))
    assert produce_error(broker, "alice", topic) is None
    error = consume_error(broker, "alice", topic, group)
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    create_acls(broker, topic_acl("alice", group, AclOperation.READ, resource=ResourceType.GROUP))
    assert consume_error(broker, "alice", topic, group) is None


def kcat(
    broker: BrokerProcess, user: str, *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    common = [
        KCAT, "-b", broker.bootstrap,
        "-X", "security.protocol=SASL_PLAINTEXT",
        "-X", "sasl.mechanisms=PLAIN",
        "-X", f"sasl.username={user}",
        "-X", f"sasl.password={user}-secret",
    ]  # fmt: skip
    return subprocess.run([*common, *args], input=stdin, capture_output=True, timeout=60)


def test_kcat_produce_denied_then_allowed(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    denied = kcat(broker, "bob", "-P", "-t", topic, stdin=b"one\n")
    assert b"Topic authorization failed" in denied.stderr, denied.stderr
    create_acls(broker, topic_acl("bob", topic, AclOperation.WRITE))
    allowed = kcat(broker, "bob", "-P", "-t", topic, stdin=b"one\n")
    assert allowed.returncode == 0 and b"failed" not in allowed.stderr, allowed.stderr


def test_kcat_group_consume_denied_without_group_read(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    create_acls(broker, topic_acl("bob", topic, AclOperation.READ))
    denied = kcat(broker, "bob", "-G", f"g-{topic}", topic, "-e", "-q")
    assert b"Group authorization failed" in denied.stderr, denied.stderr


def test_metadata_hides_topics_without_describe(broker: BrokerProcess) -> None:
    hidden, shown = new_topic(broker), new_topic(broker)
    create_acls(broker, topic_acl("bob", shown, AclOperation.DESCRIBE))
    listing = kcat(broker, "bob", "-L", "-J")
    assert listing.returncode == 0, listing.stderr
    assert f'"{shown}"'.encode() in listing.stdout
    assert f'"{hidden}"'.encode() not in listing.stdout
    assert f'"{hidden}"'.encode() in kcat(broker, "admin", "-L", "-J").stdout
    client = admin(broker, "bob")
    metadata = client.list_topics(hidden, timeout=20)
    assert metadata.topics[hidden].error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert shown in client.list_topics(timeout=20).topics
    assert hidden not in client.list_topics(timeout=20).topics


def test_metadata_auto_create_needs_create(broker: BrokerProcess) -> None:
    name = f"auto-{uuid.uuid4().hex[:8]}"
    create_acls(broker, topic_acl("bob", name, AclOperation.DESCRIBE))
    client = admin(broker, "bob")
    metadata = client.list_topics(name, timeout=20)
    assert metadata.topics[name].error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert name not in admin(broker).list_topics(timeout=20).topics
    create_acls(broker, topic_acl("bob", name, AclOperation.CREATE))
    assert client.list_topics(name, timeout=20).topics[name].error is None


def test_deny_wins_over_an_earlier_allow(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    create_acls(broker, topic_acl("alice", topic, AclOperation.WRITE))
    assert produce_error(broker, "alice", topic) is None
    create_acls(broker, topic_acl("alice", topic, AclOperation.ALL, AclPermissionType.DENY))
    error = produce_error(broker, "alice", topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_prefixed_acl_covers_only_its_prefix(broker: BrokerProcess) -> None:
    prefix = f"pfx{uuid.uuid4().hex[:6]}-"
    client = admin(broker)
    inside, outside = f"{prefix}orders", f"x{prefix}orders"
    for future in client.create_topics(
        [NewTopic(inside, 1, 1), NewTopic(outside, 1, 1)], request_timeout=20
    ).values():
        future.result()
    create_acls(
        broker,
        topic_acl("bob", prefix, AclOperation.WRITE, pattern=ResourcePatternType.PREFIXED),
    )
    assert produce_error(broker, "bob", inside) is None
    error = produce_error(broker, "bob", outside)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_super_user_passes_a_deny_everyone(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    create_acls(
        broker,
        AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:*", "*",
                   AclOperation.ALL, AclPermissionType.DENY),
    )
    assert produce_error(broker, "admin", topic) is None
    error = produce_error(broker, "bob", topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_acls_survive_a_restart_and_a_corrupt_file_stops_the_broker(tmp_path: Path) -> None:
    port = free_port()
    process = BrokerProcess(tmp_path / "data", port=port, **broker_settings(port)).start()
    try:
        topic = new_topic(process)
        create_acls(process, topic_acl("alice", topic, AclOperation.WRITE))
        assert produce_error(process, "alice", topic) is None
        process.stop()
        process.start()
        assert produce_error(process, "alice", topic) is None
        error = produce_error(process, "bob", topic)
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        assert process.stop() == 0, process.log_text()
    (tmp_path / "data" / "__acls.json").write_text('{"version": 1, "acls": [')
    with pytest.raises(RuntimeError, match="exited early") as caught:
        process.start()
    assert "__acls.json cannot be read" in str(caught.value)


def test_without_an_authorizer_acl_apis_answer_security_disabled(tmp_path: Path) -> None:
    process = BrokerProcess(tmp_path / "data").start()
    try:
        client = AdminClient({"bootstrap.servers": process.bootstrap})
        binding = topic_acl("alice", "t", AclOperation.READ)
        with pytest.raises(confluent_kafka.KafkaException) as caught:
            client.create_acls([binding], request_timeout=20)[binding].result()
        assert caught.value.args[0].code() == KafkaError.SECURITY_DISABLED
        # (librdkafka drops DescribeAcls' error code: the CLI test checks that one)
    finally:
        assert process.stop() == 0, process.log_text()


def test_fetch_without_read_is_topic_authorization_failed(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    assert produce_error(broker, "admin", topic) is None
    create_acls(broker, topic_acl("bob", topic, AclOperation.DESCRIBE))
    denied = kcat(broker, "bob", "-C", "-t", topic, "-o", "beginning", "-e", "-q")
    assert b"Topic authorization failed" in denied.stderr, denied.stderr
    create_acls(broker, topic_acl("bob", topic, AclOperation.READ))
    allowed = kcat(broker, "bob", "-C", "-t", topic, "-o", "beginning", "-e", "-q")
    assert allowed.returncode == 0 and allowed.stdout == b"v\n", allowed.stderr


def _idempotent_fatal_error(broker: BrokerProcess, user: str, topic: str) -> KafkaError | None:
    """Produce one record with enable.idempotence: the fatal error, or None."""
    producer = confluent_kafka.Producer(
        {**conf(broker, user), "enable.idempotence": "true", "message.timeout.ms": "10000"}
    )
    try:
        producer.produce(topic, b"v")
        producer.flush(20)
    except confluent_kafka.KafkaException as exc:  # a fatal error surfaces here
        return exc.args[0]
    return None


def test_idempotent_producer_needs_idempotent_write_or_write_on_a_topic(
    broker: BrokerProcess,
) -> None:
    topic = new_topic(broker)
    # the metadata must show the topic, or the record fails before InitProducerId
    create_acls(broker, topic_acl("dave", topic, AclOperation.DESCRIBE))
    denied = _idempotent_fatal_error(broker, "dave", topic)  # dave may write nowhere
    assert denied is not None and denied.code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    create_acls(broker, topic_acl("dave", topic, AclOperation.WRITE))
    # KIP-679: WRITE on a topic will do
    assert produce_error(broker, "dave", topic, {"enable.idempotence": "true"}) is None


def _our_group_poll(broker: BrokerProcess, user: str, topic: str, group: str) -> list[bytes]:
    """Sluice's consumer (FindCoordinator v4, batched keys) in ``group`` on ``topic``."""
    consumer = SyncConsumer(
        {**conf(broker, user), "group.id": group, "auto.offset.reset": "earliest"}
    )
    try:
        consumer.subscribe([topic])
        for _ in range(60):
            if records := consumer.poll(0.5):
                return [r.value for r in records]
        return []
    finally:
        consumer.close()


def test_our_group_consumer_needs_group_read_and_topic_describe(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    group = f"g-{topic}"
    assert produce_error(broker, "admin", topic) is None
    with pytest.raises(LogEngineKafkaError, match="Group authorization failed"):
        _our_group_poll(broker, "alice", topic, group)  # no ACL at all
    create_acls(broker, topic_acl("alice", group, AclOperation.READ, resource=ResourceType.GROUP))
    with pytest.raises(LogEngineKafkaError, match=r"Not authorized to access topics: \[acl-"):
        _our_group_poll(broker, "alice", topic, group)  # the group, but not the topic
    create_acls(broker, topic_acl("alice", topic, AclOperation.READ))
    assert _our_group_poll(broker, "alice", topic, group)[:1] == [b"v"]


def test_config_apis_need_describe_configs_and_alter_configs(broker: BrokerProcess) -> None:
    topic = new_topic(broker)
    resource = ConfigResource(ResourceType.TOPIC, topic)
    alter = ConfigResource(
        ResourceType.TOPIC, topic,
        incremental_configs=[ConfigEntry("retention.ms", "60000",
                                         incremental_operation=AlterConfigOpType.SET)],
    )  # fmt: skip
    alice = admin(broker, "alice")
    with pytest.raises(confluent_kafka.KafkaException) as described:
        alice.describe_configs([resource])[resource].result(20)
    assert described.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    with pytest.raises(confluent_kafka.KafkaException) as altered:
        alice.incremental_alter_configs([alter])[alter].result(20)
    assert altered.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    create_acls(
        broker,
        topic_acl("alice", topic, AclOperation.DESCRIBE_CONFIGS),
        topic_acl("alice", topic, AclOperation.ALTER_CONFIGS),
    )
    alice.incremental_alter_configs([alter])[alter].result(20)
    configs = alice.describe_configs([resource])[resource].result(20)
    assert configs["retention.ms"].value == "60000"
