"""The controller quorum across real broker processes: election, commits, kill -9, catch-up.

Three combined (broker, controller) nodes on loopback ports (``harness.quorum_node``:
the broker of ``sluice broker`` plus a test-only append/state socket). Entries are
appended through the leader; every node's state machine must hold exactly the
committed entries, in order, before and after the leader is killed with SIGKILL and
after it restarts (from its disk, then by fetching what it missed).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.broker_process import free_port
from harness.quorum_node import QuorumNode, start_cluster
from harness.wait import wait_for
from tests.support.small_fs import mounted_or_fail


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[list[QuorumNode]]:
    nodes = start_cluster(tmp_path)
    try:
        yield nodes
    finally:
        for node in nodes:
            node.kill()


def _states(nodes: list[QuorumNode]) -> list[dict[str, Any]]:
    """Each live node's state; a node that dies while asked counts as down."""
    states = []
    for node in nodes:
        if not node.is_alive():
            continue
        try:
            states.append(node.state())
        except OSError:
            continue
    return states


def _leader(nodes: list[QuorumNode], newer_than: int = 0) -> tuple[QuorumNode, int] | None:
    """The node every live node names as leader of the same epoch, if they agree."""
    states = _states(nodes)
    leaders = {(s["leader"], s["epoch"]) for s in states}
    if len(leaders) != 1:
        return None
    ((leader_id, epoch),) = leaders
    leader = next((n for n in nodes if n.node_id == leader_id), None)
    if leader is None or epoch <= newer_than:
        return None
    return leader, epoch


def _committed_everywhere(nodes: list[QuorumNode], payloads: list[bytes]) -> bool:
    wanted = [p.hex() for p in payloads]
    return all([p for _, p in s["committed"]] == wanted for s in _states(nodes))


def _append(nodes: list[QuorumNode], payloads: list[bytes]) -> None:
    """Append through whoever leads (retrying while an election is under way)."""

    def attempt() -> bool:
        found = _leader(nodes)
        if found is None:
            return False
        try:
            answer = found[0].append(payloads)
        except OSError:  # the leader died answering (killed, or its disk filled)
            return False
        return bool(answer["ok"])

    wait_for(attempt, f"an append of {len(payloads)} entries to commit")


def test_three_nodes_elect_commit_fail_over_and_catch_up(cluster: list[QuorumNode]) -> None:
    leader, epoch = wait_for(lambda: _leader(cluster), "one leader all nodes agree on")

    first = [f"entry-{i}".encode() for i in range(20)]
    for start in range(0, 20, 5):
        answer = leader.append(first[start : start + 5])
        assert answer["ok"], answer
    wait_for(lambda: _committed_everywhere(cluster, first), "20 entries on every node")

    follower = next(n for n in cluster if n is not leader)
    refused = follower.append([b"not-here"])
    assert not refused["ok"] and "NotLeaderError" in refused["error"]

    assert leader.kill() == -9
    survivors = [n for n in cluster if n is not leader]
    new_leader, new_epoch = wait_for(
        lambda: _leader(survivors, newer_than=epoch), "a new leader with a higher epoch"
    )
    assert new_leader is not leader and new_epoch > epoch

    second = [f"after-kill-{i}".encode() for i in range(10)]
    _append(survivors, second)
    wait_for(lambda: _committed_everywhere(survivors, first + second), "30 entries on survivors")

    leader.start()  # recovers its log from disk, then fetches what it missed
    wait_for(
        lambda: _committed_everywhere(cluster, first + second), "the restarted node caught up"
    )
    restarted = leader.state()
    assert restarted["epoch"] >= new_epoch and restarted["leader"] is not None
    offsets = [offset for offset, _ in restarted["committed"]]
    assert offsets == sorted(offsets) and len(set(offsets)) == 30

    status = _cluster_status(new_leader.controller_port)
    assert status["leader_id"] == restarted["leader"]
    assert sorted(v["node_id"] for v in status["voters"]) == [1, 2, 3]
    wait_for(
        lambda: all(v["lag"] == 0 for v in _cluster_status(cluster[0].controller_port)["voters"]),
        "every voter caught up in DescribeQuorum",
    )

    # a controlled shutdown (SIGTERM) of the leader resigns: EndQuorumEpoch to the others
    current, current_epoch = wait_for(lambda: _leader(cluster), "a leader")
    assert current.kill(signal.SIGTERM) == 0
    others = [n for n in cluster if n is not current]
    wait_for(lambda: _leader(others, newer_than=current_epoch), "a leader after the handover")
    assert any(f"resigns epoch {current_epoch}" in n.log_text() for n in others)


def test_snapshots_reach_a_lagging_voter_and_a_new_observer(
    cluster: list[QuorumNode], tmp_path: Path
) -> None:
    """A voter down while the others snapshot, and a broker-only node that joins later:
    both are behind the leader's log start, so they catch up by FetchSnapshot."""
    leader, _ = wait_for(lambda: _leader(cluster), "one leader all nodes agree on")
    first = [f"first-{i}".encode() for i in range(10)]
    assert leader.append(first)["ok"]
    wait_for(lambda: _committed_everywhere(cluster, first), "10 entries on every node")

    lagging = next(n for n in cluster if n is not leader)
    lagging.kill()
    up = [n for n in cluster if n is not lagging]
    second = [f"second-{i}".encode() for i in range(10)]
    assert leader.append(second)["ok"]
    wait_for(lambda: _committed_everywhere(up, first + second), "20 entries on the two up")
    for node in up:
        answer = node.snapshot()
        assert answer["ok"] and answer["end_offset"] > 20, answer
    third = [b"third"]
    assert leader.append(third)["ok"]

    voters = leader.overrides["controller.quorum.voters"]
    observer = QuorumNode(4, tmp_path / "observer", voters, None, roles="broker")
    cluster.append(observer)  # the fixture kills it too
    lagging.start()
    observer.start()
    everything = first + second + third
    wait_for(lambda: _committed_everywhere(cluster, everything), "all nodes, observer included")
    for node in (lagging, observer):
        assert node.state()["snapshot_end"] > 20  # installed from the leader's snapshot
    status = _cluster_status(leader.controller_port)
    assert [o["node_id"] for o in status["observers"]] == [4]


def _cluster_status(controller_port: int) -> dict[str, Any]:
    """``sluice cluster status --json`` against one controller (it follows the leader)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "connect_worker.cli",
            "cluster",
            "status",
            "--bootstrap-controller",
            f"127.0.0.1:{controller_port}",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    status: dict[str, Any] = json.loads(result.stdout)
    return status


def test_a_full_disk_stops_that_voter_not_the_quorum(tmp_path: Path) -> None:
    """A follower whose disk fills cannot make an entry durable: it stops (non-zero,
    a critical log line) instead of acknowledging; the other two keep committing, and
    it catches up once space is back."""
    ports = [free_port() for _ in range(3)]
    voters = ",".join(f"{i + 1}@127.0.0.1:{p}" for i, p in enumerate(ports))
    with mounted_or_fail(tmp_path / "mnt", 64 << 20) as small_fs:
        nodes = [
            QuorumNode(1, tmp_path / "n1", voters, ports[0]),
            QuorumNode(2, tmp_path / "n2", voters, ports[1]),
            QuorumNode(3, small_fs.root / "n3", voters, ports[2]),
        ]
        nodes[2].log_path = tmp_path / "n3-node.log"  # off the full disk
        try:
            for node in nodes:
                node.spawn()
            for node in nodes:
                node.wait_ready()
            first = [b"before-full"]
            _append(nodes, first)
            wait_for(lambda: _committed_everywhere(nodes, first), "the first entry everywhere")
            small_fs.fill()
            big = [bytes(200_000) + str(i).encode() for i in range(5)]
            # through whoever leads: when the full node leads, only an append makes it
            # write, fail and stop; the other two then elect a leader and commit
            _append(nodes, big)
            wait_for(lambda: not nodes[2].is_alive(), "the full node to stop")
            assert nodes[2].kill() != 0
            assert "must stop" in nodes[2].log_text()
            wait_for(lambda: _committed_everywhere(nodes[:2], first + big), "2 nodes commit")

            small_fs.free()
            nodes[2].start()
            wait_for(lambda: _committed_everywhere(nodes, first + big), "the third caught up")
        finally:
            for node in nodes:
                node.kill()


@pytest.mark.nemesis  # the long kill loop; the kill/restart tests above are its short form
@pytest.mark.parametrize("seed", [1, 2])
def test_kill_loop_loses_no_acknowledged_entry(cluster: list[QuorumNode], seed: int) -> None:
    """A seeded nemesis: eight rounds of kill -9 of a random node (the leader half the
    time) with appends in between, each followed by a restart. At the end every node
    holds the same committed entries, and every acknowledged one exactly once, in the
    order it was acknowledged."""
    rng = random.Random(seed)
    acknowledged: list[bytes] = []
    for round_ in range(8):
        found = wait_for(lambda: _leader(cluster), f"a leader in round {round_}")
        victim = found[0] if rng.random() < 0.5 else rng.choice(cluster)
        print(f"seed {seed} round {round_}: kill -9 node {victim.node_id}")
        victim.kill()
        up = [n for n in cluster if n is not victim]
        for i in range(3):
            payload = f"s{seed}-r{round_}-{i}".encode()
            _append(up, [payload])
            acknowledged.append(payload)
        victim.start()
    wait_for(
        lambda: len({json.dumps(s["committed"]) for s in _states(cluster)}) == 1
        and all(len(s["committed"]) >= len(acknowledged) for s in _states(cluster)),
        "every node to hold the same committed entries",
    )
    committed = [bytes.fromhex(p) for _, p in cluster[0].state()["committed"]]
    assert len(committed) == len(set(committed))  # nothing twice
    positions = [committed.index(p) for p in acknowledged]  # every acknowledged one is there
    assert positions == sorted(positions)  # in acknowledgement order


def test_a_controller_only_node_runs_just_the_quorum(tmp_path: Path) -> None:
    """``process.roles=controller``: the controller listener and the Raft log only (no
    client listener, no partition logs); a one-voter quorum elects itself."""
    port = free_port()
    data = tmp_path / "controller"
    args = [sys.executable, "-m", "connect_worker.cli", "broker"]
    for key, value in {
        "node.id": "1",
        "process.roles": "controller",
        "controller.quorum.voters": f"1@127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listeners": f"CONTROLLER://127.0.0.1:{port}",
        "log.dirs": str(data),
    }.items():
        args += ["--override", f"{key}={value}"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        status = wait_for(
            lambda: _cluster_status(port), "the controller to answer", retry_on=(Exception,)
        )
        assert (status["leader_id"], [v["node_id"] for v in status["voters"]]) == (1, [1])
        assert sorted(p.name for p in data.iterdir()) == ["__cluster_metadata-0", "meta.properties"]
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
