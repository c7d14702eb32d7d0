"""Two ``sluice distributed`` workers sharing one broker process: one Connect cluster.

A file source -> sink pipeline is created through the follower's REST API (so
the write is forwarded to the leader), records flow, every worker reports the
same statuses with the worker ids running each task; the worker running the
tasks is killed with SIGKILL and its tasks resume on the survivor once the
group drops it and ``scheduled.rebalance.max.delay.ms`` has passed; the sink
file then holds every input line (duplicates allowed: at-least-once).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess, config_of, put_config
from harness.standalone_process import file_sink, file_source, read_lines, wait_for_rest

#: Short enough for a test, long enough that a worker's restart is not needed.
DELAY_MS = "2000"
LINES = 300


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "broker").start()
    yield process
    process.stop()


def _workers(tmp_path: Path, broker: BrokerProcess, *names: str) -> list[DistributedProcess]:
    return [
        DistributedProcess(
            tmp_path / name,
            bootstrap=broker.bootstrap,
            group_id="cluster",
            **{"scheduled.rebalance.max.delay.ms": DELAY_MS},
        )
        for name in names
    ]


def _leader_and_follower(
    workers: list[DistributedProcess],
) -> tuple[DistributedProcess, DistributedProcess]:
    """Which worker leads: the one whose GET /connectors works is not enough; ask the log."""
    for worker in workers:
        if "(leader)" in worker.log_text():
            others = [w for w in workers if w is not worker]
            return worker, others[0]
    raise AssertionError("no worker says it leads")


def test_pipeline_through_the_follower_then_failover(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    workers = _workers(tmp_path, broker, "a", "b")
    try:
        for worker in workers:
            worker.start()
        wait_for_rest(
            lambda: _leader_and_follower(workers), "a leader", timeout_s=30
        )
        _, follower = _leader_and_follower(workers)
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line-{i}\n" for i in range(LINES)))
        put_config(follower, "src", config_of(file_source("src", source, "lines", tasks_max=1)))
        put_config(follower, "snk", config_of(file_sink("snk", sink, "lines", tasks_max=1)))
        wait_for_rest(lambda: len(read_lines(sink)) >= LINES, "every line in the sink")
        for worker in workers:  # both answer from the status topic: the same owners
            worker.wait_running("src")
            worker.wait_running("snk")
        ids = {w.worker_id for w in workers}
        owners = {name: workers[0].task_owners(name) for name in ("src", "snk")}
        assert all(owner in ids for names in owners.values() for owner in names), owners
        assert {name: workers[1].task_owners(name) for name in owners} == owners
        assert set(workers[0].http.get("/connectors").json()) == {"src", "snk"}

        # Kill the worker running the source task; more lines arrive meanwhile.
        victim = next(w for w in workers if w.worker_id == owners["src"][0])
        survivor = next(w for w in workers if w is not victim)
        victim.stop(signal.SIGKILL)
        with source.open("a") as out:
            out.write("".join(f"more-{i}\n" for i in range(LINES)))
        wait_for_rest(
            lambda: survivor.running("src")
            and survivor.running("snk")
            and set(survivor.task_owners("src") + survivor.task_owners("snk"))
            == {survivor.worker_id},
            "the tasks running on the survivor",
            timeout_s=60,
        )
        expected = {f"line-{i}" for i in range(LINES)} | {f"more-{i}" for i in range(LINES)}
        wait_for_rest(lambda: expected <= set(read_lines(sink)), "every line after failover")
        got = read_lines(sink)
        assert len(got) - len(expected) <= 2 * LINES  # duplicates, bounded by a re-read
    finally:
        for worker in workers:
            worker.close()
