"""Fixtures for the e2e tests of ``sluice standalone``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.standalone_process import StandaloneProcess


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    """A ``sluice standalone`` process shared by a module's tests (own names per test)."""
    process = StandaloneProcess(tmp_path_factory.mktemp("worker")).start()
    yield process
    code = process.stop()
    process.close()
    assert code == 0, process.log_text()
