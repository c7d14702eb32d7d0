"""Controller quorum benchmark: commit latency and throughput of 3 voters against 1.

Run ``python -m bench.quorum`` (or ``--quick``). For each cluster size (1 voter: the
baseline, nothing to replicate; 3 voters: every commit needs a follower's fetch) the
nodes are ``harness.quorum_node`` processes on loopback (``sluice broker``'s broker
plus the test-only append socket), data on the machine's disk, fsync on every step:

1. ``--appends`` sequential single-entry appends through the leader, each waiting
   for its commit: latency p50 / p99 in ms, as the append socket sees it;
2. ``--batches`` appends of ``--batch-entries`` entries of ``--entry-bytes`` bytes:
   committed entries per second.

The socket's JSON and hex cost the same in both, so the ratio is the replication's
cost. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.quorum_node import QuorumNode, start_cluster
from harness.wait import wait_for


def _leader(nodes: list[QuorumNode]) -> QuorumNode | None:
    states = [node.state() for node in nodes]
    leaders = {(s["leader"], s["epoch"]) for s in states}
    if len(leaders) != 1:
        return None
    ((leader_id, _),) = leaders
    return next((n for n in nodes if n.node_id == leader_id), None)


def _measure(size: int, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-quorum-") as tmp:
        nodes = start_cluster(Path(tmp), size)
        try:
            leader = wait_for(lambda: _leader(nodes), "a leader")
            assert leader is not None
            latencies_ms = []
            for i in range(args.appends):
                started = time.perf_counter()
                answer = leader.append([f"latency-{i}".encode()])
                latencies_ms.append((time.perf_counter() - started) * 1000)
                if not answer["ok"]:
                    raise RuntimeError(f"append failed: {answer}")
            payload = bytes(args.entry_bytes)
            batch = [payload] * args.batch_entries
            started = time.perf_counter()
            for _ in range(args.batches):
                answer = leader.append(batch)
                if not answer["ok"]:
                    raise RuntimeError(f"append failed: {answer}")
            elapsed = time.perf_counter() - started
        finally:
            for node in nodes:
                node.kill()
    cuts = statistics.quantiles(latencies_ms, n=100)
    return {
        "commit_latency_ms": {"p50": round(cuts[49], 2), "p99": round(cuts[98], 2)},
        "entries_s": round(args.batches * args.batch_entries / elapsed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--batch-entries", type=int, default=200)
    parser.add_argument("--entry-bytes", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="100 appends, 10 batches")
    args = parser.parse_args()
    if args.quick:
        args.appends, args.batches = 100, 10
    baseline = _measure(1, args)
    three = _measure(3, args)
    print(
        json.dumps(
            {
                "three_voters": three,
                "one_voter_baseline": baseline,
                "latency_p50_ratio": round(
                    three["commit_latency_ms"]["p50"] / baseline["commit_latency_ms"]["p50"], 2
                ),
                "throughput_ratio": round(three["entries_s"] / baseline["entries_s"], 2),
                "appends": args.appends,
                "batches": args.batches,
                "batch_entries": args.batch_entries,
                "entry_bytes": args.entry_bytes,
            }
        )
    )


if __name__ == "__main__":
    main()
