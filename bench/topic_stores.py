"""The distributed worker's topic-backed stores against the standalone worker's file stores.

Starts ``sluice broker`` in its own process, then measures, in the same run:

1. ``config_put_ms_p50/p99``: :meth:`ConfigTopicStore.put_connector_config`
   (send, acks=all, read the topic back to its end) per connector; baseline
   ``file_config_put_ms_p50``: :class:`FileConfigStore.put` (atomic rewrite
   with fsync) for the same connectors;
2. ``offset_commit_ms_p50/p99``: one source offset commit (``put_all`` of
   one partition, then ``flush``) into a 25-partition offsets topic; baseline
   ``file_offset_commit_ms_p50``: the same on :class:`FileOffsetStore`;
3. ``config_restart_s``: a fresh config store reading back every record
   written in 1 (how long a worker needs before it can join the group).

Prints one JSON line. ``--quick`` writes fewer records.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from connect_worker.storage import (
    ConfigTopicStore,
    FileConfigStore,
    FileOffsetStore,
    StoredConnector,
    TopicOffsetStore,
    partition_key,
)
from harness.broker_process import BrokerProcess

CONFIG = {"connector.class": "FileStreamSource", "tasks.max": "1", "file": "/tmp/in.txt"}


def timed_ms(count: int, action: Callable[[int], None]) -> list[float]:
    """Milliseconds each of ``count`` calls of ``action(i)`` took."""
    out = []
    for i in range(count):
        start = time.perf_counter()
        action(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def run(count: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory(prefix="bench-topic-stores-") as tmp:
        root = Path(tmp)
        broker = BrokerProcess(root / "data").start()
        try:
            client = {"bootstrap.servers": broker.bootstrap}
            configs = ConfigTopicStore("bench-configs", client, replication_factor=1)
            configs.start()
            try:
                config_ms = timed_ms(
                    count, lambda i: configs.put_connector_config(f"c{i}", CONFIG)
                )
            finally:
                configs.stop()
            file_configs = FileConfigStore(root / "connectors.json")
            file_config_ms = timed_ms(
                count, lambda i: file_configs.put(StoredConnector(f"c{i}", CONFIG))
            )

            offsets = TopicOffsetStore("bench-offsets", client, replication_factor=1)
            offsets.start()

            def commit(store: TopicOffsetStore | FileOffsetStore, i: int) -> None:
                store.put_all("src", {partition_key({"file": "in.txt"}): {"position": i}})
                store.flush()

            try:
                offset_ms = timed_ms(count, lambda i: commit(offsets, i))
            finally:
                offsets.stop()
            file_offsets = FileOffsetStore(root / "offsets.json")
            file_offset_ms = timed_ms(count, lambda i: commit(file_offsets, i))

            start = time.perf_counter()
            restarted = ConfigTopicStore("bench-configs", client, replication_factor=1)
            restarted.start()
            restart_s = time.perf_counter() - start
            assert len(restarted.snapshot().connectors) == count
            restarted.stop()
        finally:
            broker.stop()
    return {
        "records": count,
        "config_put_ms_p50": p(config_ms, 0.5),
        "config_put_ms_p99": p(config_ms, 0.99),
        "file_config_put_ms_p50": p(file_config_ms, 0.5),
        "offset_commit_ms_p50": p(offset_ms, 0.5),
        "offset_commit_ms_p99": p(offset_ms, 0.99),
        "file_offset_commit_ms_p50": p(file_offset_ms, 0.5),
        "config_restart_s": round(restart_s, 3),
        "config_put_ms_mean": round(statistics.fmean(config_ms), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 records instead of 1000")
    args = parser.parse_args()
    print(json.dumps(run(200 if args.quick else 1000)))


if __name__ == "__main__":
    main()
