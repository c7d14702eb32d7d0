"""Distributed workers: file pipeline rate on one vs two workers, and failover time.

A ``sluice broker`` process and ``sluice distributed`` worker processes
(:mod:`harness.distributed_process`). Rate: a FileStreamSource -> topic ->
FileStreamSink pipeline created over REST, timed from the create until the
sink file holds every line; first on a cluster of one worker (the baseline),
then on a cluster of two (the source and the sink task on different
workers). Failover: with two workers, the one running the source task is
killed with SIGKILL, and timed until the survivor reports the task RUNNING
on itself; the killed worker is started again, and the next kill waits until
both workers have joined the same generation and it held for 3 s (a kill in
the middle of a rebalance is another measurement). What
the settings make it wait is about ``session.timeout.ms`` (less the time
since the last heartbeat) + ``scheduled.rebalance.max.delay.ms``, printed as
``session_plus_delay_s``: the baseline the failover times compare with.

Prints one JSON line. ``--quick``: fewer records and kills.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess, config_of, put_config
from harness.standalone_process import file_sink, file_source, wait_for_rest

SESSION_TIMEOUT_MS = 6000
DELAY_MS = 2000
LINE = "x" * 99  # 100 bytes with its newline


def _cluster(root: Path, broker: BrokerProcess, group: str, count: int) -> list[DistributedProcess]:
    settings: dict[str, Any] = {
        "session.timeout.ms": str(SESSION_TIMEOUT_MS),
        "heartbeat.interval.ms": "1000",
        "scheduled.rebalance.max.delay.ms": str(DELAY_MS),
        "offset.flush.interval.ms": "1000",
    }
    workers = [
        DistributedProcess(
            root / f"{group}-{i}", bootstrap=broker.bootstrap, group_id=group, **settings
        )
        for i in range(count)
    ]
    for worker in workers:
        worker.start()
    return workers


def _rate(root: Path, broker: BrokerProcess, workers: int, records: int) -> float:
    """Records per second through source -> topic -> sink on ``workers`` workers."""
    group = f"rate{workers}"
    cluster = _cluster(root, broker, group, workers)
    try:
        source, sink = root / f"{group}.in", root / f"{group}.out"
        source.write_text((LINE + "\n") * records)
        expected = records * (len(LINE) + 1)
        start = time.monotonic()
        put_config(cluster[0], "src", config_of(file_source("src", source, group)))
        put_config(cluster[-1], "snk", config_of(file_sink("snk", sink, group)))
        wait_for_rest(
            lambda: sink.exists() and sink.stat().st_size >= expected,
            "every line in the sink",
            timeout_s=600,
        )
        return records / (time.monotonic() - start)
    finally:
        for worker in cluster:
            worker.close()


def _failovers(root: Path, broker: BrokerProcess, kills: int) -> list[float]:
    cluster = _cluster(root, broker, "failover", 2)
    times = []
    try:
        source, sink = root / "failover.in", root / "failover.out"
        source.write_text("a\n")
        put_config(cluster[0], "src", config_of(file_source("src", source, "failover")))
        put_config(cluster[0], "snk", config_of(file_sink("snk", sink, "failover")))
        for _ in range(kills):
            owner = wait_for_rest(
                lambda: cluster[0].running("src") and cluster[0].task_owners("src")[0],
                "the source running",
                timeout_s=120,
            )
            victim = next(w for w in cluster if w.worker_id == owner)
            survivor = next(w for w in cluster if w is not victim)
            start = time.monotonic()
            victim.stop(signal.SIGKILL)
            def source_on(s: DistributedProcess = survivor) -> bool:
                return s.running("src") and s.task_owners("src") == [s.worker_id]

            wait_for_rest(source_on, "the source on the survivor", timeout_s=120)
            times.append(time.monotonic() - start)
            victim.start()
            _wait_settled(cluster)
    finally:
        for worker in cluster:
            worker.close()
    return times


_JOINED = re.compile(r"joined generation (\d+)")


def _generation(worker: DistributedProcess) -> int | None:
    joined = _JOINED.findall(worker.log_text())
    return int(joined[-1]) if joined else None


def _wait_settled(cluster: list[DistributedProcess], quiet_s: float = 3.0) -> None:
    """Until every worker has joined the same generation and no newer one came for
    ``quiet_s`` (the rebalances a rejoining worker causes are over)."""
    deadline = time.monotonic() + 120
    settled_since: float | None = None
    seen: int | None = None
    while time.monotonic() < deadline:
        generations = {_generation(w) for w in cluster}
        current = next(iter(generations)) if len(generations) == 1 else None
        if current is None or current != seen:
            seen, settled_since = current, time.monotonic()
        elif current is not None and time.monotonic() - (settled_since or 0) >= quiet_s:
            return
        time.sleep(0.2)
    raise RuntimeError("the workers did not settle on one generation within 120 s")


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50k records, 3 kills")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--skip-rate", action="store_true", help="measure failover only")
    args = parser.parse_args()
    records = 50_000 if args.quick else args.records
    kills = 3 if args.quick else args.kills
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as tmp:
        root = Path(tmp)
        broker = BrokerProcess(root / "broker").start()
        try:
            one = 0.0 if args.skip_rate else _rate(root, broker, 1, records)
            two = 0.0 if args.skip_rate else _rate(root, broker, 2, records)
            failovers = _failovers(root, broker, kills)
        finally:
            broker.stop()
    result: dict[str, Any] = {
        "records": records,
        "line_bytes": len(LINE) + 1,
        "two_workers_records_s": round(two),
        "one_worker_records_s": round(one),
        "kills": len(failovers),
        "failover_p50_s": round(statistics.median(failovers), 2),
        "failover_p99_s": round(_percentile(failovers, 0.99), 2),
        "each_failover_s": [round(t, 2) for t in failovers],
        "session_plus_delay_s": (SESSION_TIMEOUT_MS + DELAY_MS) / 1000,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "scheduled_rebalance_max_delay_ms": DELAY_MS,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
