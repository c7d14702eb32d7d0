"""A running ``sluice standalone`` refuses REST writes to file-defined connectors (issue 14 #3).

Both kinds of pipeline file: one in the watched ``pipelines/`` folder and one
named on the command line. Each REST write answers 409 naming the file, and
neither the file nor the running connector changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.standalone_process import StandaloneProcess, file_source


@pytest.fixture
def worker_with_files(tmp_path: Path) -> Iterator[tuple[StandaloneProcess, Path, Path]]:
    (tmp_path / "in.txt").write_text("a\n")
    named = tmp_path / "named.properties"
    named.write_text(file_source("named", tmp_path / "in.txt", "e2e-file-managed-named"))
    process = StandaloneProcess(tmp_path / "worker").start(named)
    try:
        source = file_source("watched", tmp_path / "in.txt", "e2e-file-managed-watched")
        watched = process.write_pipeline("watched", source)
        yield process, watched, named
    finally:
        code = process.stop()
        process.close()
        assert code == 0, process.log_text()


def assert_conflict(response: Any, path: Path) -> None:
    assert response.status_code == 409, response.text
    body = response.json()
    assert body["error_code"] == 409 and str(path) in body["message"], body


def test_rest_writes_to_file_connectors_answer_409(
    worker_with_files: tuple[StandaloneProcess, Path, Path],
) -> None:
    worker, watched, named = worker_with_files
    http = worker.http
    for name, path in (("watched", watched), ("named", named)):
        worker.wait_running(name)
        text = path.read_text()
        config = http.get(f"/connectors/{name}/config").json()
        assert_conflict(
            http.put(f"/connectors/{name}/config", json={**config, "batch.size": "7"}), path
        )
        assert_conflict(http.delete(f"/connectors/{name}"), path)
        assert_conflict(http.post("/connectors", json={"name": name, "config": config}), path)
        assert http.put(f"/connectors/{name}/pause").status_code == 202
        assert http.put(f"/connectors/{name}/resume").status_code == 202
        assert path.read_text() == text
        assert "batch.size" not in http.get(f"/connectors/{name}/config").json()
    assert sorted(http.get("/connectors").json()) == ["named", "watched"]
