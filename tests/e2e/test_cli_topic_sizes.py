"""``sluice topics describe`` shows each partition's size in bytes (DescribeLogDirs), the
topic's total, and the total over the topics described; the sizes are the bytes on disk."""

from __future__ import annotations

import re

from harness.broker_process import BrokerProcess
from tests.e2e.test_cli_log_commands import sluice


def on_disk(broker: BrokerProcess, topic: str, partition: int) -> int:
    return sum(f.stat().st_size for f in (broker.data_dir / f"{topic}-{partition}").glob("*.log"))


def test_describe_shows_partition_sizes_and_totals(broker: BrokerProcess, topic_name: str) -> None:
    other = f"{topic_name}-b"
    for name, partitions in ((topic_name, "3"), (other, "1")):
        assert sluice(broker, "topics", "create", name, "--partitions", partitions).returncode == 0
    lines = "".join(f"k{i}:{'v' * 50}\n" for i in range(60))
    produced = sluice(broker, "produce", topic_name, "--key-separator", ":", stdin=lines)
    assert produced.returncode == 0, produced.stderr

    described = sluice(broker, "topics", "describe", topic_name, other)
    assert described.returncode == 0, described.stderr
    sizes = {
        (m["topic"], int(m["p"])): int(m["size"])
        for m in re.finditer(r"Topic: (?P<topic>\S+)\tPartition: (?P<p>\d+)\t.*"
                             r"\tSizeBytes: (?P<size>\d+)", described.stdout)
    }
    expected = {(topic_name, p): on_disk(broker, topic_name, p) for p in range(3)}
    expected[(other, 0)] = 0
    assert sizes == expected
    assert sum(expected.values()) > 60 * 50  # the records are in there
    total = sum(v for (t, _), v in expected.items() if t == topic_name)
    assert f"Topic: {topic_name}\tPartitionCount: 3\tSizeBytes: {total}\t" in described.stdout
    assert described.stdout.splitlines()[-1] == (
        f"Total: 2 topics, 4 partitions, SizeBytes: {total}"
    )
