"""The helper scripts `make` runs must import and run from a clean checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fetch_tansu_script_runs_and_names_the_binary() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fetch-tansu.py")],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    binary = Path(done.stdout.strip().removeprefix("tansu: "))
    assert binary.name == "tansu" and binary.is_file()
