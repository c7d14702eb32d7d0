"""``sluice storage format --add-scram``: the first admin's SCRAM credential in the
metadata log of a fresh cluster (Kafka's ``kafka-storage format --add-scram``).

Three nodes, each formatted with the same ``--add-scram`` for alice and no
``sasl.scram.bootstrap.users``: the first active controller appends alice's
UserScramCredentialRecord, so alice logs in with SCRAM-SHA-256 on every
broker's SASL_PLAINTEXT listener, and DescribeUserScramCredentials lists her.
No node keeps her in its local credentials file: the login comes from the
metadata log. A wrong password is still refused; formatting a formatted node
fails unless ``--ignore-formatted``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ScramMechanism, UserScramCredentialDeletion

from harness.cluster import LocalCluster
from harness.wait import wait_for

ALICE = "SCRAM-SHA-256=[name=alice,password=alice-secret]"


def _sluice(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    nodes = LocalCluster(
        tmp_path,
        extra_listeners=("SASL_PLAINTEXT",),
        **{"sasl.enabled.mechanisms": "SCRAM-SHA-256"},
    )
    for node in nodes.nodes.values():
        formatted = _sluice("storage", "format", "-c", str(node.properties), "--add-scram", ALICE)
        assert formatted.returncode == 0, formatted.stderr
        assert "1 bootstrap SCRAM credential(s) (users alice)" in formatted.stdout
        assert "alice-secret" not in formatted.stdout + formatted.stderr
    with nodes.running():
        yield nodes


def _admin(bootstrap: str, password: str) -> AdminClient:
    return AdminClient(
        {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "alice",
            "sasl.password": password,
        }
    )


def _logs_in(bootstrap: str, password: str = "alice-secret") -> bool:
    try:
        brokers = _admin(bootstrap, password).list_topics(timeout=5).brokers
    except KafkaException:
        return False
    return sorted(brokers) == [1, 2, 3]


def test_the_formatted_admin_logs_in_on_every_broker(cluster: LocalCluster) -> None:
    for n, node in cluster.nodes.items():
        bootstrap = node.bootstrap_on("SASL_PLAINTEXT")
        wait_for(lambda b=bootstrap: _logs_in(b), f"alice logged in on node {n}", 30)
        local = (cluster.directory / f"data{n}" / "__scram_credentials.json")
        assert not local.exists() or "alice" not in local.read_text()
        assert "alice-secret" not in node.log_text()
    assert not _logs_in(cluster.nodes[2].bootstrap_on("SASL_PLAINTEXT"), "wrong-secret")
    admin = _admin(cluster.nodes[3].bootstrap_on("SASL_PLAINTEXT"), "alice-secret")
    described = admin.describe_user_scram_credentials(["alice"])["alice"].result(timeout=30)
    assert [(i.mechanism.name, i.iterations) for i in described.scram_credential_infos] == [
        ("SCRAM_SHA_256", 4096)
    ]
    logs = "".join(node.log_text() for node in cluster.nodes.values())
    assert "wrote 1 bootstrap SCRAM credential(s) (users alice)" in logs


def test_a_deleted_bootstrap_user_stays_deleted_after_the_whole_cluster_restarts(
    cluster: LocalCluster,
) -> None:
    wait_for(lambda: _logs_in(cluster.nodes[1].bootstrap_on("SASL_PLAINTEXT")), "alice logs in")
    alice = _admin(cluster.nodes[1].bootstrap_on("SASL_PLAINTEXT"), "alice-secret")
    alice.alter_user_scram_credentials(  # her own, the only credential
        [UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_256)]
    )["alice"].result(timeout=30)
    # no user, topic, config or producer id is left: the metadata looks like a new
    # cluster's, and every node restarts, so a controller is activated again
    for node in cluster.nodes.values():
        node.kill()
    cluster.start()
    cluster.wait_registered()  # unfenced again: a controller is active again
    assert not _logs_in(cluster.nodes[2].bootstrap_on("SASL_PLAINTEXT"))
    logs = "".join(node.log_text() for node in cluster.nodes.values())
    assert logs.count("wrote 1 bootstrap SCRAM credential(s)") == 1  # the first start only


def test_a_formatted_node_is_not_formatted_again(cluster: LocalCluster) -> None:
    properties = str(cluster.nodes[1].properties)
    again = _sluice("storage", "format", "-c", properties, "--add-scram", ALICE)
    assert again.returncode == 2
    assert "is already formatted" in again.stderr
    skipped = _sluice("storage", "format", "-c", properties, "--ignore-formatted")
    assert skipped.returncode == 0, skipped.stderr
    assert "left as it is" in skipped.stdout


def test_a_bad_add_scram_is_refused_and_formats_nothing(tmp_path: Path) -> None:
    nodes = LocalCluster(tmp_path, size=1)
    credential = "SCRAM-SHA-256=[name=alice,password=pw,iterations=99]"
    bad = _sluice("storage", "format", "-c", str(nodes.nodes[1].properties),
                  "--add-scram", credential)  # fmt: skip
    assert bad.returncode == 2
    assert "--add-scram: iterations='99' of user alice" in bad.stderr
    assert not (tmp_path / "data1" / "meta.properties").exists()
