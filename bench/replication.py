"""Replication benchmark: acks=all with RF=3 against acks=1 with RF=1, and leader failover.

Run ``python -m bench.replication`` (or ``--quick``). Three ``sluice broker``
processes on this machine (``harness/faults/cluster.py``: combined broker and
controller voters on loopback, data on the machine's disk).

1. Throughput: librdkafka produces ``--records`` records of ``--record-bytes``
   bytes to a topic of ``--partitions`` partitions with ``acks=all`` and
   replication factor 3 (``min.insync.replicas=2``), and the same to a topic with
   replication factor 1 with ``acks=1`` (the baseline, nothing to replicate),
   on the same cluster in the same run; records/s from the first send to the
   last acknowledgement. The ratio is the cost of synchronous replication.
2. Failover (``broker.session.timeout.ms=2000``): an idempotent ``acks=all``
   librdkafka producer writes to one partition (RF=3) continuously; the
   partition's leader is killed with SIGKILL ``--kills`` times (restarted and
   back in the ISR before the next kill); each sample is the time from the kill
   to the first acknowledgement of a record sent after it. p50 and p99 (nearest
   rank: with 20 kills, p99 is the slowest). Next to it, the time until a
   surviving broker's Metadata names a new leader (polled every 10 ms): the
   controller's share of the failover; the rest is the client finding it.
   ``each_kill_ms`` lists ``[to ack, to metadata, leader was the active
   controller too (1)]`` per kill.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import confluent_kafka

from harness.faults.cluster import Cluster
from harness.wait import wait_for

SESSION_TIMEOUT_MS = 2000


def _produce_rate(bootstrap: str, topic: str, acks: str, args: argparse.Namespace) -> float:
    failures: list[Any] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            failures.append(err)

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "linger.ms": 5,
            "queue.buffering.max.messages": 500_000,
        }
    )
    payload = bytes(args.record_bytes)
    warm = min(1000, args.records // 10)
    for _ in range(warm):  # connections and metadata before the clock starts
        producer.produce(topic, payload, on_delivery=on_delivery)
    producer.flush(60)
    started = time.perf_counter()
    for _ in range(args.records):
        while True:
            try:
                producer.produce(topic, payload, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.005)
    if producer.flush(300) != 0:
        raise RuntimeError(f"acks={acks}: records still unacknowledged after 300 s")
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"acks={acks}: {len(failures)} records failed, first {failures[0]}")
    return args.records / elapsed


def _throughput(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    with Cluster(root, 3) as cluster:
        cluster.start_all()
        cluster.create_topic("rf3", args.partitions, 3, **{"min.insync.replicas": "2"})
        cluster.create_topic("rf1", args.partitions, 1)
        baseline = _produce_rate(cluster.bootstrap, "rf1", "1", args)
        replicated = _produce_rate(cluster.bootstrap, "rf3", "all", args)
    return {"acks_all_rf3_records_s": round(replicated), "acks_1_rf1_records_s": round(baseline)}


class _Writer(threading.Thread):
    """Keeps writing to partition 0 and notes when each record was sent and acknowledged."""

    def __init__(self, bootstrap: str, topic: str, extra: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.topic = topic
        self.producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 0,
                "message.timeout.ms": 60_000,
                "log.connection.close": False,
                **extra,
            }
        )
        self.stopping = threading.Event()
        self.acked: list[tuple[float, float]] = []  # (sent, acknowledged), monotonic
        self.errors: list[Any] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        while not self.stopping.is_set():
            sent = time.monotonic()

            def done(err: Any, _msg: Any, sent: float = sent) -> None:
                with self.lock:
                    if err is None:
                        self.acked.append((sent, time.monotonic()))
                    else:
                        self.errors.append(err)

            self.producer.produce(self.topic, b"x" * 100, partition=0, on_delivery=done)
            self.producer.poll(0.002)
        self.producer.flush(60)

    def first_ack_of_a_send_after(self, at: float) -> float | None:
        with self.lock:
            later = [acked for sent, acked in self.acked if sent > at]
        return min(later) if later else None


def _failover(
    root: Path, args: argparse.Namespace
) -> tuple[list[float], list[float], list[bool]]:
    """Per kill: ms to the first acknowledgement, and ms until a surviving broker's
    Metadata names a new leader (where the time goes: controller or client); and how
    of the killed leaders was the active controller too."""
    overrides = {
        "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
        "broker.heartbeat.interval.ms": "500",
        "replica.lag.time.max.ms": "10000",
    }
    acked_ms: list[float] = []
    elected_ms: list[float] = []
    controller_too: list[bool] = []
    with Cluster(root, 3, **overrides) as cluster:
        cluster.start_all()
        cluster.create_topic("failover", 1, 3, **{"min.insync.replicas": "2"})
        writer = _Writer(cluster.bootstrap, "failover", dict(args.failover_client))
        writer.start()
        try:
            wait_for(lambda: writer.first_ack_of_a_send_after(0.0), "a first acknowledgement")
            for _ in range(args.kills):
                leader = cluster.wait_for_leader("failover", 0)
                controller_too.append(cluster.active_controller() == leader)
                killed_at = time.monotonic()
                cluster.kill(leader)
                acked_at = elected_at = None
                while acked_at is None or elected_at is None:
                    if time.monotonic() - killed_at > 120:
                        raise RuntimeError(f"no failover within 120 s of killing node {leader}")
                    if elected_at is None and cluster.leader_of("failover", 0) not in (
                        None,
                        leader,
                    ):
                        elected_at = time.monotonic()
                    if acked_at is None:
                        acked_at = writer.first_ack_of_a_send_after(killed_at)
                    time.sleep(0.01)
                acked_ms.append((acked_at - killed_at) * 1000)
                elected_ms.append((elected_at - killed_at) * 1000)
                cluster.start(leader)
                cluster.wait_for_isr("failover", 1, set(cluster.nodes), 120)
        finally:
            writer.stopping.set()
            writer.join(90)
        if writer.errors:
            raise RuntimeError(f"{len(writer.errors)} writes failed, first: {writer.errors[0]}")
    return acked_ms, elected_ms, controller_too


def _nearest_rank(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--record-bytes", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument(
        "--failover-client",
        action="append",
        default=[],
        type=lambda pair: tuple(pair.split("=", 1)),
        metavar="KEY=VALUE",
        help="a librdkafka setting of the failover producer (repeatable; default: its defaults)",
    )
    parser.add_argument("--skip-throughput", action="store_true", help="measure failover only")
    parser.add_argument("--quick", action="store_true", help="50000 records, 5 kills")
    args = parser.parse_args()
    if args.quick:
        args.records, args.kills = 50_000, 5
    with tempfile.TemporaryDirectory(prefix="bench-replication-") as tmp:
        result: dict[str, Any] = {}
        if not args.skip_throughput:
            throughput = _throughput(Path(tmp) / "throughput", args)
            result.update(throughput)
            result["throughput_ratio"] = round(
                throughput["acks_all_rf3_records_s"] / throughput["acks_1_rf1_records_s"], 2
            )
        failover_ms, elected_ms, controller_too = _failover(Path(tmp) / "failover", args)
    result["failover_ms"] = {
        "p50": round(_nearest_rank(failover_ms, 0.50)),
        "p99": round(_nearest_rank(failover_ms, 0.99)),
        "min": round(min(failover_ms)),
        "max": round(max(failover_ms)),
    }
    result["new_leader_in_metadata_ms"] = {
        "p50": round(_nearest_rank(elected_ms, 0.50)),
        "p99": round(_nearest_rank(elected_ms, 0.99)),
    }
    result.update(
        {
            "kills": args.kills,
            "kills_of_the_active_controller_too": sum(controller_too),
            "each_kill_ms": [
                [round(a), round(m), int(c)]
                for a, m, c in zip(failover_ms, elected_ms, controller_too, strict=True)
            ],
            "failover_client": dict(args.failover_client),
            "broker_session_timeout_ms": SESSION_TIMEOUT_MS,
            "records": args.records,
            "record_bytes": args.record_bytes,
            "partitions": args.partitions,
        }
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
