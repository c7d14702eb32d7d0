"""The README's tour, run on the shipped ``configs/`` as ``make run`` runs them.

A worker (random ports) watches a copy of the shipped ``configs/pipelines/``
from a folder laid out like the checkout, so the demo pipelines' relative
paths (``configs/sample/demo.txt``, ``data/out/demo.txt``) mean what they mean
under ``make run``. The README's broker section produces keyed records with
``kcat -K:`` into ``demo``; they must reach the demo sink's file.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.standalone_process import StandaloneProcess, read_lines, wait_for_rest

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
KCAT = shutil.which("kcat") or "kcat"  # make test installs it; a missing kcat fails loudly


@pytest.fixture
def demo_worker(tmp_path: Path) -> Iterator[StandaloneProcess]:
    shutil.copytree(CONFIGS, tmp_path / "configs")
    worker = StandaloneProcess(
        tmp_path, **{"pipelines.dir": str(tmp_path / "configs" / "pipelines")}
    ).start()
    yield worker
    code = worker.stop()
    worker.close()
    assert code == 0, worker.log_text()


def test_keyed_records_from_kcat_reach_the_demo_sink(demo_worker: StandaloneProcess) -> None:
    out = demo_worker.root / "data" / "out" / "demo.txt"
    sample = (CONFIGS / "sample" / "demo.txt").read_text().splitlines()
    wait_for_rest(lambda: read_lines(out) == sample, "the sample's lines in data/out/demo.txt")

    # README, "The broker and the log tools": keyed records with kcat -K:
    subprocess.run(
        [KCAT, "-b", demo_worker.bootstrap, "-t", "demo", "-K:", "-P"],
        input=b"k1:hello\nk2:world\n",
        check=True,
        timeout=60,
    )
    wait_for_rest(
        lambda: read_lines(out)[len(sample):] == ["hello", "world"],
        f"the keyed records in the sink's file (status: {demo_worker.status('demo-sink')})",
    )
    assert demo_worker.running("demo-sink"), demo_worker.status("demo-sink")
    assert "task demo-sink-0 failed" not in demo_worker.log_text()
