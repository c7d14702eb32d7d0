"""One fault-injection run, start to verdict: cluster, topic, clients, nemesis, checker.

:func:`run_nemesis` starts three ``sluice broker`` nodes, creates a topic with
replication factor 3 and ``min.insync.replicas=2``, runs two idempotent
``acks=all`` producers (librdkafka and ours) and a consumer while the nemesis
works, then recovers, stops the clients, reads every partition through a
consumer and every node's copy from its log dir, and checks. The returned
:class:`RunReport` lists every violation and says how to reproduce the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.faults.checker import FinalState, check
from harness.faults.cluster import Cluster
from harness.faults.history import History
from harness.faults.nemesis import FAULTS, Nemesis
from harness.faults.replica_logs import read_partition
from harness.faults.workload import (
    LibrdkafkaConsumer,
    LibrdkafkaProducer,
    SluiceProducer,
    read_final,
)
from harness.wait import wait_for

TOPIC = "nemesis"
PARTITIONS = 3
SESSION_TIMEOUT_MS = 3000
DELIVERY_TIMEOUT_MS = 120_000
"""Longer than any fault: the producers wait out a fault and retry, never give up."""


@dataclass
class RunReport:
    """What a run found: ``violations`` (empty: correct) and how to read the run."""

    seed: int
    faults: list[str]
    history: History
    violations: list[str] = field(default_factory=list)
    logs: str = ""

    def describe(self, max_violations: int = 40) -> str:
        shown = self.violations[:max_violations]
        more = len(self.violations) - len(shown)
        return "\n".join(
            [
                f"seed {self.seed}; faults {self.faults}; {self.history.summary()}",
                f"{len(self.violations)} violation(s):",
                *shown,
                *([f"... and {more} more"] if more > 0 else []),
                "---- failed sends (producer: error) ----",
                self.history.failure_summary(),
                "---- events ----",
                self.history.event_log(),
                "---- node logs (tails) ----",
                self.logs,
            ]
        )


def run_nemesis(
    root: Path,
    seed: int,
    duration_s: float | None = None,
    *,
    faults: tuple[str, ...] = FAULTS,
    rate_per_s: float = 100.0,
) -> RunReport:
    """One run: every fault once (``duration_s`` None) or random ``faults`` for
    ``duration_s``."""
    cluster = Cluster(
        root,
        3,
        **{
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "3000",
            "min.insync.replicas": "2",
        },
    )
    history = History()
    report = RunReport(seed, [], history)
    workers: list[LibrdkafkaProducer | SluiceProducer | LibrdkafkaConsumer] = []
    try:
        cluster.start_all()
        cluster.create_topic(TOPIC, PARTITIONS, 3, **{"min.insync.replicas": "2"})
        history.event(f"topic {TOPIC}: {PARTITIONS} partitions, RF 3, min.insync.replicas 2")
        for kind in (LibrdkafkaProducer, SluiceProducer):
            workers.append(
                kind(
                    history,
                    cluster.bootstrap,
                    TOPIC,
                    PARTITIONS,
                    rate_per_s=rate_per_s,
                    delivery_timeout_ms=DELIVERY_TIMEOUT_MS,
                )
            )
        workers.append(LibrdkafkaConsumer(history, cluster.bootstrap, TOPIC, PARTITIONS))
        for worker in workers:
            worker.start()
        wait_for(lambda: history.acked_count() >= 50, "the first 50 acknowledgements")

        nemesis = Nemesis(
            cluster,
            history,
            TOPIC,
            PARTITIONS,
            seed,
        )
        try:
            if duration_s is None:
                nemesis.run_each_once()
            else:
                nemesis.run_for(duration_s, faults)
        finally:
            report.faults = nemesis.done
            report.violations += nemesis.violations

        history.event("stopping the clients")
        for worker in workers:
            worker.stop()
        for worker in workers:
            worker.join(60)
            if worker.is_alive():
                report.violations.append(f"client {worker.name} did not stop")
            if worker.crash is not None:
                report.violations.append(f"client {worker.name} crashed: {worker.crash!r}")

        cluster.wait_for_isr(TOPIC, PARTITIONS, set(cluster.nodes))
        metadata = cluster.metadata()
        assert metadata is not None
        isr = {p: info.isr for p, info in metadata.topics[TOPIC].partitions.items()}
        logs, high_watermarks = read_final(cluster.bootstrap, TOPIC, PARTITIONS)
        history.event(f"final high watermarks {high_watermarks}, ISR {isr}")

        codes = cluster.stop_all()
        for node_id, code in codes.items():
            if code != 0:
                report.violations.append(f"node {node_id} exited with {code} on SIGTERM")
        replicas = {
            p: {
                node.node_id: read_partition(node.data_dir, TOPIC, p)
                for node in cluster.nodes.values()
            }
            for p in range(PARTITIONS)
        }
        final = FinalState(logs, high_watermarks, replicas, isr)
        report.violations += check(history, final, expected_isr=set(cluster.nodes))
        for prefix in ("rdk", "ours"):
            if not any(history.sent[a.value].producer.startswith(prefix) for a in history.acked):
                report.violations.append(f"producer {prefix} got no acknowledgement at all")
    except Exception as exc:  # the report says where the run stopped, with the logs
        report.violations.append(f"the run stopped: {type(exc).__name__}: {exc}")
    finally:
        for worker in workers:
            worker.stop()
        cluster.stop_all()
        report.logs = cluster.logs(tail=60)
        _save(root, report)
    return report


def _save(root: Path, report: RunReport) -> None:
    """The run's description next to the node logs, for a failed test's artifacts."""
    (root / "nemesis-report.txt").write_text(report.describe(max_violations=10_000))
