"""Connect group failover: from ``kill -9`` of a worker to its work owned by the survivors.

Membership only (no connectors run): a ``sluice broker`` process, two
:class:`WorkerGroupMember` s in this process, and a third in a process of its
own (:mod:`harness.connect_member`) that is killed with SIGKILL once it holds a
share, then started again, ``--kills`` times. Each kill is timed until the two
survivors between them hold every connector and task once. That time is the
coordinator noticing the silence (``session.timeout.ms``), the rebalance, the
leader holding the lost work back for ``scheduled.rebalance.max.delay.ms``,
and the rebalance that reassigns it.

Baseline from the same run: the same kills with
``scheduled.rebalance.max.delay.ms=0`` (reassigned in the first rebalance).

Prints one JSON line. ``--quick`` kills three times per setting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from connect_worker.distributed.assignor import Work, union
from connect_worker.distributed.membership import ConfigState, GroupSettings, WorkerGroupMember
from connect_worker.distributed.protocol import ConnectAssignment
from connect_worker.runtime.status import TaskId
from harness.broker_process import BrokerProcess
from harness.connect_member import MemberProcess

TASK_COUNTS = {"source-a": 6, "sink-b": 6}
CONFIGURED = Work.configured(TASK_COUNTS)
SESSION_TIMEOUT_MS = 3000
DELAY_MS = 2000
_PHASE_TIMEOUT_S = 120.0  # every wait is bounded: a failover that never ends fails the run


class _Holder:
    """A listener that only keeps what its worker runs."""

    def __init__(self) -> None:
        self.running = Work()

    async def on_assigned(self, assignment: ConnectAssignment, generation: int) -> None:
        self.running = Work.of(assignment.connectors, assignment.tasks)

    async def on_revoked(
        self, leader: str, connectors: tuple[str, ...], tasks: tuple[TaskId, ...]
    ) -> None:
        self.running -= Work.of(connectors, tasks)

    async def on_lost(
        self, connectors: tuple[str, ...], tasks: tuple[TaskId, ...], reason: str
    ) -> None:
        self.running = Work()


def _once(works: list[Work]) -> bool:
    count = sum(len(w.connectors) + len(w.tasks) for w in works)
    return union(works) == CONFIGURED and count == len(CONFIGURED.connectors) + len(
        CONFIGURED.tasks
    )


async def _until(what: str, check: Any) -> None:
    deadline = time.monotonic() + _PHASE_TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not within {_PHASE_TIMEOUT_S}s: {what}")
        await asyncio.sleep(0.01)


async def _failovers(bootstrap: str, delay_ms: int, kills: int, log_dir: Path) -> list[float]:
    group = f"bench-connect-{delay_ms}"
    settings = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "session.timeout.ms": str(SESSION_TIMEOUT_MS),
        "heartbeat.interval.ms": str(SESSION_TIMEOUT_MS // 10),
        "scheduled.rebalance.max.delay.ms": str(delay_ms),
    }
    holders = [_Holder(), _Holder()]
    members = [
        WorkerGroupMember(
            GroupSettings.from_mapping(settings),
            rest_url=f"http://survivor-{i}:8083/",
            config_state=lambda: ConfigState(1, TASK_COUNTS),
            listener=holder,
        )
        for i, holder in enumerate(holders)
    ]

    async def run(member: WorkerGroupMember) -> None:
        while True:
            await member.poll(100)

    tasks = [asyncio.create_task(run(m)) for m in members]
    times_s: list[float] = []
    try:
        for kill in range(kills):
            victim = MemberProcess(
                settings, "http://victim:8083/", TASK_COUNTS, log_dir / f"{group}-{kill}.log"
            )
            try:
                await _until(
                    "the victim holds a share",
                    lambda v=victim: bool(v.snapshot()[0])
                    and _once([h.running for h in holders] + [v.snapshot()[0]]),
                )
                os.kill(victim.process.pid, signal.SIGKILL)
                killed_at = time.monotonic()
                await _until(
                    "the survivors hold everything", lambda: _once([h.running for h in holders])
                )
                times_s.append(time.monotonic() - killed_at)
            finally:
                victim.stop()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for member in members:
            await member.stop()
    return times_s


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="three kills per setting")
    args = parser.parse_args()
    kills = 3 if args.quick else args.kills
    with tempfile.TemporaryDirectory(prefix="bench-connect-group-") as tmp:
        root = Path(tmp)
        broker = BrokerProcess(root / "data")
        broker.overrides["group.min.session.timeout.ms"] = str(SESSION_TIMEOUT_MS // 3)
        broker.start()
        try:
            delayed = asyncio.run(_failovers(broker.bootstrap, DELAY_MS, kills, root))
            immediate = asyncio.run(_failovers(broker.bootstrap, 0, kills, root))
        finally:
            broker.stop()
    result = {
        "kills": kills,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "scheduled_rebalance_max_delay_ms": DELAY_MS,
        "failover_ms_p50": round(statistics.median(delayed) * 1000),
        "failover_ms_p99": round(_p(delayed, 0.99) * 1000),
        "failover_ms_max": round(max(delayed) * 1000),
        "baseline_no_delay_failover_ms_p50": round(statistics.median(immediate) * 1000),
        "baseline_no_delay_failover_ms_p99": round(_p(immediate, 0.99) * 1000),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
