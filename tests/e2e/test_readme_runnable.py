"""The README's examples run as written (issue 14: it named files that did not exist).

Every path into ``configs/``, ``docs/`` or ``examples/`` the README mentions
exists (or is created by one of its own commands), and every shell block that
runs ``sluice test`` or ``sluice validate`` runs, unchanged, in a folder laid
out like the checkout, where ``.venv/bin/sluice`` is this Python's ``sluice``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")

PATH = re.compile(r"(?<![\w./-])((?:configs|docs|examples)/[\w./-]*[\w/])")
CREATED = re.compile(r">>?\s*((?:configs|docs|examples)/[\w./-]+)")
SHELL_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)
OFFLINE_COMMAND = re.compile(r"\bsluice (?:test|validate)\b")


def shell_blocks() -> list[str]:
    return SHELL_BLOCK.findall(README)


def test_every_path_the_readme_names_exists() -> None:
    created = set(CREATED.findall(README))
    named = set(PATH.findall(README)) - created
    assert named, "no paths found: has the README's layout changed?"
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert not missing, f"the README names paths that do not exist: {missing}"


def test_every_file_given_to_sluice_test_or_validate_exists() -> None:
    created = set(CREATED.findall(README))
    blocks = "\n".join(shell_blocks())
    commands = re.findall(r"sluice (?:test|validate) (\S+)", blocks)
    assert any(command.startswith("configs/") for command in commands)
    for path in commands:
        assert path in created or (ROOT / path).is_file(), f"README: sluice ... {path}"


def _offline_blocks() -> list[str]:
    return [block for block in shell_blocks() if OFFLINE_COMMAND.search(block)]


@pytest.mark.parametrize("block", _offline_blocks(), ids=lambda b: b.splitlines()[0][:40])
def test_readme_block_runs_as_written(block: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    sluice = bin_dir / "sluice"
    sluice.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m connect_worker.cli "$@"\n')
    sluice.chmod(0o755)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"{block}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
