"""``sluice topics|produce|consume|groups`` run as a user runs them, against a broker process."""

from __future__ import annotations

import subprocess
import sys

from harness.broker_process import BrokerProcess


def sluice(
    broker: BrokerProcess, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "connect_worker.cli", "--log-level", "warning", *args]
    command += ["-b", broker.bootstrap]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)


def test_topic_lifecycle(broker: BrokerProcess, topic_name: str) -> None:
    created = sluice(
        broker,
        "topics",
        "create",
        topic_name,
        "--partitions",
        "3",
        "--config",
        "retention.ms=3600000",
    )
    assert created.returncode == 0, created.stderr
    again = sluice(broker, "topics", "create", topic_name)
    assert again.returncode == 1 and "TOPIC_ALREADY_EXISTS" in again.stderr
    assert topic_name in sluice(broker, "topics", "list").stdout.split()
    described = sluice(broker, "topics", "describe", topic_name).stdout
    assert "PartitionCount: 3" in described and "retention.ms=3600000" in described
    assert sluice(broker, "topics", "alter", topic_name, "--partitions", "5").returncode == 0
    assert "PartitionCount: 5" in sluice(broker, "topics", "describe", topic_name).stdout
    assert sluice(broker, "topics", "delete", topic_name).returncode == 0
    assert topic_name not in sluice(broker, "topics", "list").stdout.split()


def test_produce_consume_and_group_lag(broker: BrokerProcess, topic_name: str) -> None:
    lines = "".join(f"k{i}:value {i}\n" for i in range(20))
    produced = sluice(broker, "produce", topic_name, "--key-separator", ":", stdin=lines)
    assert produced.returncode == 0, produced.stderr
    group = f"g-{topic_name}"
    consumed = sluice(
        broker,
        "consume",
        topic_name,
        "--from-beginning",
        "--group",
        group,
        "--max-messages",
        "15",
        "--print-key",
    )
    assert consumed.returncode == 0, consumed.stderr
    rows = consumed.stdout.splitlines()
    assert rows == [f"k{i}\tvalue {i}" for i in range(15)]
    assert group in sluice(broker, "groups", "list").stdout.split()
    described = sluice(broker, "groups", "describe", group).stdout.splitlines()
    assert described[-1].split("\t")[:5] == [topic_name, "0", "15", "20", "5"]
    reset = sluice(
        broker,
        "groups",
        "reset-offsets",
        group,
        "--topic",
        topic_name,
        "--to-earliest",
        "--execute",
    )
    assert reset.returncode == 0, reset.stderr
    described = sluice(broker, "groups", "describe", group).stdout.splitlines()
    assert described[-1].split("\t")[:5] == [topic_name, "0", "0", "20", "20"]
