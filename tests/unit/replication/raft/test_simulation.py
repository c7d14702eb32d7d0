"""The Raft core in a seeded simulated network: faults, then healing; invariants every step.

Replay a failing run by its test id (it names the voters and the seed), e.g.
``pytest 'tests/unit/replication/raft/test_simulation.py::test_safety_under_faults[5-17]'``;
the assertion message starts with ``seed=N``. ``RAFT_SIM_SEEDS=N`` widens the slow run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from log_engine.replication.raft import FileRaftStorage, Role
from tests.unit.replication.raft.simulation import Faults, Simulation

DEFAULT_SEEDS = range(25)
DEFAULT_DURATION_MS = 20_000
SLOW_SEEDS = range(1000, 1000 + int(os.environ.get("RAFT_SIM_SEEDS", "40")))
SLOW_DURATION_MS = 60_000


def run_and_heal(
    seed: int, voters: int, duration_ms: int, faults: Faults | None = None
) -> Simulation:
    simulation = Simulation(seed, voters, faults)
    simulation.run(duration_ms)
    simulation.heal_and_converge()
    return simulation


@pytest.mark.parametrize("seed", DEFAULT_SEEDS)
@pytest.mark.parametrize("voters", [3, 5])
def test_safety_under_faults(voters: int, seed: int) -> None:
    simulation = run_and_heal(seed, voters, DEFAULT_DURATION_MS)
    assert simulation.checker.committed  # something was committed
    assert simulation.stats["crashes"] > 0 and simulation.stats["nemesis"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
@pytest.mark.parametrize("voters", [3, 5])
def test_safety_under_faults_long(voters: int, seed: int) -> None:
    run_and_heal(seed, voters, SLOW_DURATION_MS)


@pytest.mark.parametrize("voters", [3, 5])
def test_a_calm_network_elects_once_and_commits_everything(voters: int) -> None:
    calm = Faults(loss=0.0, duplicate=0.0, fault_interval_ms=10**9)
    simulation = Simulation(1, voters, calm)
    simulation.run(5_000)
    assert len(simulation.checker.leaders) == 1
    simulation.heal_and_converge()
    payloads = {e.payload for e in simulation.checker.committed.values() if not e.control}
    assert len(payloads) == simulation.proposed + 1  # every proposal, and the final marker


def stable_leader(simulation: Simulation) -> int:
    simulation.run(2_000)
    leader = simulation.leader()
    assert leader is not None and leader.driver is not None
    return leader.node_id


@pytest.mark.parametrize("voters", [3, 5])
def test_an_isolated_leader_steps_down_and_the_majority_moves_on(voters: int) -> None:
    calm = Faults(loss=0.0, duplicate=0.0, fault_interval_ms=10**9)
    simulation = Simulation(2, voters, calm)
    old = stable_leader(simulation)
    old_epoch = simulation.nodes[old - 1].driver.node.epoch  # type: ignore[union-attr]
    committed_before = dict(simulation.checker.committed)
    simulation._isolate({old})
    simulation.run(3_000)
    old_node = simulation.nodes[old - 1].driver.node  # type: ignore[union-attr]
    assert old_node.role is not Role.LEADER  # lost the majority: resigned (check quorum)
    new = simulation.leader()
    assert new is not None and new.node_id != old
    assert new.driver.node.epoch > old_epoch  # type: ignore[union-attr]
    simulation.heal_and_converge()
    for offset, entry in committed_before.items():
        assert simulation.checker.committed[offset] == entry


@pytest.mark.parametrize("voters", [3, 5])
def test_a_follower_cut_off_for_long_rejoins_without_disrupting_the_leader(voters: int) -> None:
    calm = Faults(loss=0.0, duplicate=0.0, fault_interval_ms=10**9)
    simulation = Simulation(4, voters, calm)
    leader_id = stable_leader(simulation)
    leader = simulation.nodes[leader_id - 1].driver.node  # type: ignore[union-attr]
    epoch = leader.epoch
    loner = next(n for n in simulation.nodes if n.node_id != leader_id)
    simulation._isolate({loner.node_id})
    simulation.run(5_000)  # the loner's pre-votes all fail: its epoch stays put
    assert loner.driver is not None and loner.driver.node.epoch == epoch
    committed_at_heal = leader.high_watermark
    simulation.blocked.clear()
    simulation.run(2_000)
    assert simulation.leader() is simulation.nodes[leader_id - 1] and leader.epoch == epoch
    assert loner.driver.node.leader_id == leader_id
    assert loner.driver.node.high_watermark >= committed_at_heal  # caught up


def test_a_whole_cluster_restart_recovers_from_durable_state() -> None:
    calm = Faults(loss=0.0, duplicate=0.0, fault_interval_ms=10**9)
    simulation = Simulation(3, 3, calm)
    stable_leader(simulation)
    simulation.run(1_000)
    committed = len(simulation.checker.committed)
    for node in simulation.nodes:
        simulation.crash(node)
    simulation.heal_and_converge()
    assert len(simulation.checker.committed) > committed


@pytest.mark.parametrize("seed", range(2))
def test_safety_under_faults_with_file_storage(seed: int, tmp_path: Path) -> None:
    simulation = Simulation(seed, 3, storage_dir=tmp_path)
    simulation.run(5_000)
    simulation.heal_and_converge()
    assert simulation.stats["crashes"] > 0
    for node in simulation.nodes:
        assert isinstance(node.storage, FileRaftStorage)
        node.storage.close()


def test_the_same_seed_replays_the_same_run() -> None:
    first = run_and_heal(5, 3, 3_000)
    second = run_and_heal(5, 3, 3_000)
    assert first.steps == second.steps and first.stats == second.stats
    assert first.checker.committed == second.checker.committed
