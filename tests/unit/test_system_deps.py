"""`make test`'s system packages: the README names each, and the installer says what to
do where it cannot install (no root, no apt)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-system-deps.sh"


def _system_packages() -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(r"^SYSTEM_PACKAGES\s*:=\s*(.+)$", makefile, re.MULTILINE)
    assert found, "SYSTEM_PACKAGES is not in the Makefile"
    return found.group(1).split()


def test_the_readme_names_every_package_and_the_way_without_root() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [pkg for pkg in _system_packages() if f"`{pkg}`" not in readme]
    assert not missing, f"README.md does not name {missing}"
    assert "root" in readme and "apt-get" in readme
    assert "make test SYSTEM_PACKAGES=" in readme


def test_without_apt_the_installer_names_what_to_install(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # the tools the script needs, but no apt-get and no sudo
    bin_dir.mkdir()
    for tool in ("bash", "dpkg-query", "grep", "id"):
        found = shutil.which(tool)
        if found is not None:
            (bin_dir / tool).symlink_to(found)
    done = subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT), "kcat", "sluice-no-such-package"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PATH": str(bin_dir)},
    )
    assert done.returncode == 1
    assert "sluice-no-such-package" in done.stderr
    assert "by hand" in done.stderr and "make test SYSTEM_PACKAGES=" in done.stderr


def test_nothing_to_install_needs_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
