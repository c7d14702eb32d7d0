"""Fixtures for the e2e tests of ``sluice standalone``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.standalone_process import StandaloneProcess


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    """A ``sluice standalone`` process shared by a module's tests (own names per test)."""
    process = StandaloneProcess(tmp_path_factory.mktemp("worker")).start()
    yield process
    code = process.stop()
    process.close()
    assert code == 0, process.log_text()


@pytest.fixture
def fresh_worker(tmp_path: Path) -> Iterator[Callable[..., StandaloneProcess]]:
    """Workers of the test's own, for restarts and crashes (not started yet)."""
    made: list[StandaloneProcess] = []

    def make(**settings: str) -> StandaloneProcess:
        process = StandaloneProcess(tmp_path / f"worker{len(made)}", **settings)
        made.append(process)
        return process

    yield make
    for process in made:
        process.close()
