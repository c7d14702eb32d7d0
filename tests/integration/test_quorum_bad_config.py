"""``sluice broker`` with wrong cluster settings: a clear error and a non-zero exit, never a
silently split cluster. Real processes; each case exits before binding anything, except
the data-dir cases, which first format a dir with one identity and then start it with
another, and the case of two voter lists that disagree, which runs both.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from harness.broker_process import BrokerProcess, free_port
from harness.quorum_node import QuorumNode
from harness.wait import wait_for


def _run_broker(overrides: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "connect_worker.cli", "broker"]
    for key, value in overrides.items():
        args += ["--override", f"{key}={value}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def _combined(tmp_path: Path, node_id: int, voters: str, controller_port: int) -> dict[str, str]:
    return {
        "node.id": str(node_id),
        "process.roles": "broker,controller",
        "controller.quorum.voters": voters,
        "controller.listener.names": "CONTROLLER",
        "listeners": f"PLAINTEXT://127.0.0.1:{free_port()},"
        f"CONTROLLER://127.0.0.1:{controller_port}",
        "log.dirs": str(tmp_path / f"data{node_id}"),
    }


def test_a_controller_that_is_not_a_voter_exits_with_a_clear_error(tmp_path: Path) -> None:
    """The process exits 2 with one line naming the keys (every rule: test_cluster_config.py)."""
    port = free_port()
    overrides = _combined(tmp_path, 7, f"1@127.0.0.1:{port},2@127.0.0.1:{free_port()}", port)
    result = _run_broker(overrides)
    assert result.returncode == 2, result.stderr
    assert "node.id=7 has the controller role but is not in controller.quorum.voters" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert not Path(overrides["log.dirs"]).exists()  # nothing formatted


def _format_single_voter(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """Start and stop a one-voter node so its data dir gets a meta.properties."""
    port = free_port()
    overrides = _combined(tmp_path, 1, f"1@127.0.0.1:{port}", port)
    data = Path(overrides["log.dirs"])
    node = BrokerProcess(data, **overrides)
    node.port = int(overrides["listeners"].split(",")[0].rsplit(":", 1)[1])
    node.start()
    assert node.stop(signal.SIGTERM) == 0
    meta = (data / "meta.properties").read_text()
    assert "node.id=1" in meta and "cluster.id=" in meta and "version=1" in meta
    return overrides, data


def test_data_dir_of_another_cluster_is_refused(tmp_path: Path) -> None:
    overrides, data = _format_single_voter(tmp_path)
    before = (data / "meta.properties").read_bytes()
    port = free_port()
    other = {**overrides, "controller.quorum.voters": f"1@127.0.0.1:{port}"}
    other["listeners"] = (
        overrides["listeners"].rsplit(",", 1)[0] + f",CONTROLLER://127.0.0.1:{port}"
    )
    result = _run_broker(other)
    assert result.returncode == 2
    assert "belongs to another cluster" in result.stderr
    assert (data / "meta.properties").read_bytes() == before  # nothing rewritten

    same_cluster = _run_broker({**other, "cluster.id": "not-the-one-on-disk"})
    assert same_cluster.returncode == 2 and "belongs to another cluster" in same_cluster.stderr


def test_data_dir_of_another_node_is_refused(tmp_path: Path) -> None:
    overrides, data = _format_single_voter(tmp_path)
    port = free_port()
    (tmp_path / "copy").mkdir()
    moved = {
        **overrides,
        "node.id": "2",
        "controller.quorum.voters": f"2@127.0.0.1:{port}",
        "listeners": overrides["listeners"].rsplit(",", 1)[0] + f",CONTROLLER://127.0.0.1:{port}",
        "cluster.id": _cluster_id(data),
    }
    result = _run_broker(moved)
    assert result.returncode == 2
    assert "has node.id=1 but the config says node.id=2" in result.stderr


def _cluster_id(data: Path) -> str:
    for line in (data / "meta.properties").read_text().splitlines():
        if line.startswith("cluster.id="):
            return line.split("=", 1)[1]
    raise AssertionError("no cluster.id")


def test_a_node_with_another_voter_list_is_rejected_not_joined(tmp_path: Path) -> None:
    """Two nodes agree on the voters; a third lists them differently (another cluster id):
    its requests are refused with INCONSISTENT_CLUSTER_ID, logged on both sides."""
    ports = [free_port() for _ in range(3)]
    voters = ",".join(f"{i + 1}@127.0.0.1:{p}" for i, p in enumerate(ports))
    odd_voters = voters.replace(f"1@127.0.0.1:{ports[0]}", f"1@localhost:{ports[0]}")
    nodes = [
        QuorumNode(1, tmp_path / "n1", voters, ports[0]),
        QuorumNode(2, tmp_path / "n2", voters, ports[1]),
        QuorumNode(3, tmp_path / "n3", odd_voters, ports[2]),
    ]
    try:
        for node in nodes:
            node.spawn()
        for node in nodes:
            node.wait_ready()
        wait_for(
            lambda: "rejects this node's cluster id" in nodes[2].log_text(),
            "the odd node to report the cluster id mismatch",
        )
        wait_for(
            lambda: any(
                "INCONSISTENT" in n.log_text() or "for cluster" in n.log_text() for n in nodes[:2]
            ),
            "the good nodes to log the refused request",
        )
        leader = wait_for(
            lambda: next(
                (s for s in (n.state() for n in nodes[:2]) if s["leader"] is not None), None
            ),
            "the two agreeing voters to elect a leader (a majority of three)",
        )
        assert leader["leader"] in (1, 2)
        assert nodes[2].state()["leader"] is None  # it never joined anyone
    finally:
        for node in nodes:
            node.kill()


def test_a_node_started_twice_is_refused(tmp_path: Path) -> None:
    """The same node again: on the same data dir (its Raft log is locked), or on another
    data dir (its controller listener is taken). Either way a clear error, exit 2."""
    port = free_port()
    overrides = _combined(tmp_path, 1, f"1@127.0.0.1:{port}", port)
    first = BrokerProcess(Path(overrides["log.dirs"]), **overrides)
    first.port = int(overrides["listeners"].split(",")[0].rsplit(":", 1)[1])
    first.start()
    try:
        same_dir = _run_broker(overrides)
        assert same_dir.returncode == 2, same_dir.stderr
        assert "is in use by another process" in same_dir.stderr

        other_dir = _run_broker({**overrides, "log.dirs": str(tmp_path / "elsewhere")})
        assert other_dir.returncode == 2, other_dir.stderr
        assert "cannot bind the controller listener" in other_dir.stderr
        assert "is node 1 already running?" in other_dir.stderr
        assert first.is_alive()
    finally:
        assert first.stop(signal.SIGTERM) == 0
