"""Fault injection against a real 3-node cluster (issue 17): nothing acknowledged is lost.

Three ``sluice broker`` processes (``harness/faults/cluster.py``), a topic with
replication factor 3 and ``min.insync.replicas=2``, idempotent ``acks=all``
producers (librdkafka and ours) and a consumer, while a seeded nemesis
(``harness/faults/nemesis.py``) kills the partition leader and the active
controller with SIGKILL, pauses a leader past the session timeout (a zombie),
restarts a node and kills two of three. The checker
(``harness/faults/checker.py``) then compares what the clients were told with
every partition as read at the end and with each node's log dir.

The short run (every fault once) is part of ``make test``. The long one:
``pytest -m nemesis tests/fault --nemesis-seed 7 --nemesis-duration-s 1800``
(``--nemesis-faults pause_leader,kill_leader`` to pick from fewer faults).
A failing run leaves ``nemesis-report.txt`` (violations, the nemesis' and the
clients' event log) and ``nodeN.log`` in its temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.faults.nemesis import FAULTS
from harness.faults.run import run_nemesis

DEFAULT_SEED = 17


def _seed(config: pytest.Config) -> int:
    seed = config.getoption("--nemesis-seed")
    return DEFAULT_SEED if seed is None else int(seed)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_each_fault_once_loses_no_acknowledged_record(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    report = run_nemesis(tmp_path, _seed(pytestconfig))
    assert not report.violations, report.describe()
    assert sorted(report.faults) == sorted(FAULTS), report.describe()


@pytest.mark.nemesis
@pytest.mark.timeout(0)
def test_random_faults_for_a_long_run_lose_no_acknowledged_record(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    duration_s = float(pytestconfig.getoption("--nemesis-duration-s"))
    chosen = pytestconfig.getoption("--nemesis-faults")
    faults = tuple(chosen.split(",")) if chosen else FAULTS
    report = run_nemesis(tmp_path, _seed(pytestconfig), duration_s, faults=faults)
    assert not report.violations, report.describe()
    assert report.faults, report.describe()
