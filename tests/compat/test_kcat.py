"""kcat (librdkafka 2.0) against a Sluice broker process."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from harness.broker_process import BrokerProcess

pytestmark = pytest.mark.compat

KCAT = shutil.which("kcat") or "kcat"  # make test installs it; a missing kcat fails loudly


def kcat(
    broker: BrokerProcess, *args: str, stdin: bytes | None = None, timeout: float = 60
) -> bytes:
    result = subprocess.run(
        [KCAT, "-b", broker.bootstrap, *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result.stdout


def test_metadata_lists_topics_and_partitions(broker: BrokerProcess, topic_name: str) -> None:
    kcat(broker, "-P", "-t", topic_name, stdin=b"one\n")
    listing = json.loads(kcat(broker, "-L", "-J"))
    assert listing["brokers"] == [{"id": 1, "name": broker.bootstrap}]
    topics = {t["topic"]: t for t in listing["topics"]}
    assert len(topics[topic_name]["partitions"]) == 1
    assert topics[topic_name]["partitions"][0]["leader"] == 1


def test_round_trip_10k_keyed_messages_with_headers(broker: BrokerProcess, topic_name: str) -> None:
    count = 10_000
    lines = [f"key-{i}\tvalue-{i}-{'x' * (i % 50)}" for i in range(count)]
    kcat(
        broker,
        "-P",
        "-t",
        topic_name,
        "-K",
        "\t",
        "-H",
        "source=test",
        "-H",
        "n=1",
        stdin=("\n".join(lines) + "\n").encode(),
    )
    out = kcat(
        broker,
        "-C",
        "-t",
        topic_name,
        "-e",
        "-o",
        "beginning",
        "-f",
        "%k\t%s\t%h\t%o\n",
    )
    rows = out.decode().splitlines()
    assert len(rows) == count
    for i, row in enumerate(rows):
        key, value, headers, offset = row.split("\t")
        assert (key, value) == tuple(lines[i].split("\t"))
        assert headers == "source=test,n=1"
        assert int(offset) == i


def test_group_consumption(broker: BrokerProcess, topic_name: str) -> None:
    kcat(broker, "-P", "-t", topic_name, stdin=b"".join(b"m%d\n" % i for i in range(100)))
    out = kcat(
        broker,
        "-G",
        f"g-{topic_name}",
        topic_name,
        "-e",
        "-X",
        "auto.offset.reset=earliest",
        "-f",
        "%s\n",
        timeout=90,
    )
    assert sorted(out.decode().split()) == sorted(f"m{i}" for i in range(100))
