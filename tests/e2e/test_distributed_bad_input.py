"""Distributed workers given bad setups: each gets a clear error, nothing runs twice.

- Two Connect clusters configured with the same ``group.id`` but different config
  topics end up in one group: the worker whose config topic cannot reach the
  offset the leader assigned at says so, names the likely cause, and runs none of
  that assignment.
- A REST write to a follower that cannot reach the leader: 500 naming the leader's
  url; nothing is created.
- A connector whose plugin only some workers have: what is placed on a worker
  without it fails with a trace naming the class and that worker; the rest runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess, free_port
from harness.distributed_process import DistributedProcess, put_config
from harness.standalone_process import wait_for_rest
from tests.e2e.test_writing_a_connector import block

DELAY_MS = "1000"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "broker").start()
    yield process
    process.stop()


def _worker(
    root: Path, broker: BrokerProcess, group_id: str = "cluster", **extra: str
) -> DistributedProcess:
    return DistributedProcess(
        root,
        bootstrap=broker.bootstrap,
        group_id=group_id,
        **{"scheduled.rebalance.max.delay.ms": DELAY_MS, **extra},
    )


def _leads(worker: DistributedProcess) -> bool:
    return "(leader)" in worker.log_text()


def test_two_clusters_sharing_a_group_id_say_so(tmp_path: Path, broker: BrokerProcess) -> None:
    first = _worker(tmp_path / "a", broker, "shared", **{"config.storage.topic": "a-configs"})
    second = _worker(tmp_path / "b", broker, "shared", **{"config.storage.topic": "b-configs"})
    workers = [first, second]
    try:
        first.start()
        wait_for_rest(lambda: _leads(first), "the first worker to lead")
        second.start()
        source = tmp_path / "in.txt"
        source.write_text("one\ntwo\n")
        config = {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": "shared-lines",
            "tasks.max": "1",
        }
        put_config(first, "only-in-a", config)
        message = "Is another Connect cluster using group.id 'shared'"
        wait_for_rest(lambda: message in second.log_text(), "the out-of-sync worker's error")
        assert "b-configs" in second.log_text()
        # the worker of the other cluster ran nothing of what the leader assigned
        started = [line for line in second.log_text().splitlines() if "running connectors" in line]
        assert not any("only-in-a" in line for line in started), started
        assert first.status("only-in-a") is not None
    finally:
        for worker in workers:
            worker.close()


def test_a_write_to_a_follower_that_cannot_reach_the_leader(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    unreachable = free_port()  # nothing listens there: the leader advertises a dead url
    leader = _worker(tmp_path / "leader", broker, **{"rest.advertised.port": str(unreachable)})
    follower = _worker(tmp_path / "follower", broker)
    try:
        leader.start()
        wait_for_rest(lambda: _leads(leader), "the first worker to lead")
        follower.start()
        config = {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": "t"}

        def answer() -> tuple[int, str] | None:
            response = follower.http.put("/connectors/unforwarded/config", json=config)
            return None if response.status_code == 409 else (response.status_code, response.text)

        status, text = wait_for_rest(answer, "an answer outside a rebalance")
        assert status == 500, text
        assert f"127.0.0.1:{unreachable}" in text and "forwarding" in text, text
        assert leader.http.get("/connectors").json() == []
        assert follower.http.get("/connectors").json() == []
    finally:
        follower.close()
        leader.close()


def test_a_plugin_missing_on_one_worker_fails_only_what_it_runs(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "lines_sink.py").write_text(block("python"))
    with_plugin = _worker(tmp_path / "with", broker, **{"plugin.path": str(plugins)})
    without = _worker(tmp_path / "without", broker)
    try:
        with_plugin.start()
        wait_for_rest(lambda: _leads(with_plugin), "the worker with the plugin to lead")
        without.start()
        wait_for_rest(lambda: "running connectors" in without.log_text(), "the second worker in")
        for name in ("lines-a", "lines-b"):  # one connector for each worker
            put_config(with_plugin, name, {
                "connector.class": "LinesSink",
                "topics": f"{name}-in",
                "path": str(tmp_path / f"{name}.txt"),
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            })  # fmt: skip

        def placed() -> list[dict[str, str]] | None:
            """Every connector and task with its state, once all have settled on both."""
            units = []
            for name in ("lines-a", "lines-b"):
                status = with_plugin.status(name)
                if status is None:
                    return None
                units += [status["connector"], *status["tasks"]]
            if any(u["state"] not in ("RUNNING", "FAILED") for u in units):
                return None
            return units if {u["worker_id"] for u in units} == {
                with_plugin.worker_id, without.worker_id
            } else None

        units = wait_for_rest(placed, "the connectors placed on both workers")
        for unit in units:
            if unit["worker_id"] == without.worker_id:
                assert unit["state"] == "FAILED", unit
                assert "LinesSink" in unit["trace"] and without.worker_id in unit["trace"], unit
            else:
                assert unit["state"] == "RUNNING", unit
    finally:
        without.close()
        with_plugin.close()
