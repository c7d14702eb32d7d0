"""``sluice acls`` and ``sluice users scram`` end to end, as processes, against a
SASL broker with the authorizer on; the admin's credentials come from a
``--command-config`` file, as with kafka-acls.sh."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import confluent_kafka
import pytest

from harness.broker_process import BrokerProcess
from tests.integration.security.test_acls import (  # noqa: F401 - the fixture
    broker,
    conf,
    new_topic,
    produce_error,
)


def sluice(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", "--log-level", "warning", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )


@pytest.fixture(scope="module")
def admin_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "admin.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="admin-secret";\n'
    )
    return path


def test_acls_add_list_remove(broker: BrokerProcess, admin_config: Path) -> None:  # noqa: F811
    topic = new_topic(broker)
    connect = ["-b", broker.bootstrap, "--command-config", str(admin_config)]
    added = sluice(
        "acls", "add", "--allow-principal", "User:alice", "--operation", "Write",
        "--operation", "Describe", "--topic", topic, *connect,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert f"ALLOW User:alice from * WRITE on TOPIC:LITERAL:{topic}" in added.stdout
    assert produce_error(broker, "alice", topic) is None
    listed = sluice("acls", "list", "--topic", topic, *connect)
    assert listed.returncode == 0, listed.stderr
    assert (
        f"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name={topic}, "
        "patternType=LITERAL)`:" in listed.stdout
    )
    assert "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)" in listed.stdout
    removed = sluice(
        "acls", "remove", "--allow-principal", "User:alice", "--operation", "Write",
        "--topic", topic, *connect,
    )  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    assert f"removed: ALLOW User:alice from * WRITE on TOPIC:LITERAL:{topic}" in removed.stdout
    error = produce_error(broker, "alice", topic)
    assert error is not None
    assert error.code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    still = sluice("acls", "list", "--topic", topic, *connect).stdout
    assert "operation=DESCRIBE" in still and "operation=WRITE" not in still


def test_acls_commands_report_refusals_and_bad_options(
    broker: BrokerProcess,  # noqa: F811
    admin_config: Path,
    tmp_path: Path,
) -> None:
    bob = tmp_path / "bob.properties"
    bob.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.username=bob\nsasl.password=bob-secret\n"
    )
    refused = sluice(
        "acls", "add", "--allow-principal", "User:bob", "--operation", "All", "--cluster",
        "-b", broker.bootstrap, "--command-config", str(bob),
    )  # fmt: skip
    assert refused.returncode == 1
    assert "ClusterAuthorizationFailedError" in refused.stderr
    listing = sluice("acls", "list", "-b", broker.bootstrap, "--command-config", str(bob))
    assert listing.returncode == 1 and "ClusterAuthorizationFailedError" in listing.stderr
    bad = sluice(
        "acls", "add", "--allow-principal", "alice", "--operation", "Read", "--topic", "t",
        "-b", broker.bootstrap, "--command-config", str(admin_config),
    )  # fmt: skip
    assert bad.returncode == 2 and "Type:name" in bad.stderr
    unknown = sluice(
        "acls", "add", "--allow-principal", "User:alice", "--operation", "Fly", "--topic", "t",
        "-b", broker.bootstrap, "--command-config", str(admin_config),
    )  # fmt: skip
    assert unknown.returncode == 2 and "'Fly': not an ACL operation" in unknown.stderr


def test_users_scram_set_list_delete(broker: BrokerProcess, admin_config: Path) -> None:  # noqa: F811
    user = f"u{uuid.uuid4().hex[:6]}"
    password = f"pw-{uuid.uuid4().hex}"
    connect = ["-b", broker.bootstrap, "--command-config", str(admin_config)]
    created = sluice(
        "users", "scram", "set", user, "--add-config",
        f"SCRAM-SHA-512=[iterations=8192,password={password}]", *connect,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert password not in created.stdout + created.stderr
    topic = new_topic(broker)
    sluice(
        "acls", "add", "--allow-principal", f"User:{user}", "--operation", "Write",
        "--topic", topic, *connect,
    )  # fmt: skip
    scram = {
        **conf(broker, user),
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.password": password,
    }
    producer = confluent_kafka.Producer(scram)
    results: list[object] = []
    producer.produce(topic, b"v", on_delivery=lambda err, _m: results.append(err))
    producer.flush(30)
    assert results == [None]
    listed = sluice("users", "scram", "list", user, *connect)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == f"{user}: SCRAM-SHA-512 (iterations=8192)"
    changed = sluice(
        "users", "scram", "set", user, "--mechanism", "scram-sha-512", "--password-stdin",
        *connect, stdin="another-password\n",
    )  # fmt: skip
    assert changed.returncode == 0, changed.stderr
    deleted = sluice("users", "scram", "delete", user, "--mechanism", "SCRAM-SHA-512", *connect)
    assert deleted.returncode == 0, deleted.stderr
    assert user not in sluice("users", "scram", "list", *connect).stdout


def test_acls_list_on_a_broker_without_authorizer_says_security_disabled(tmp_path: Path) -> None:
    process = BrokerProcess(tmp_path / "data").start()
    try:
        listing = sluice("acls", "list", "-b", process.bootstrap)
        assert listing.returncode == 1
        assert "SecurityDisabledError" in listing.stderr
        assert "authorizer.class.name" in listing.stderr
    finally:
        assert process.stop() == 0, process.log_text()
