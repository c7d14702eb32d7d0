"""What a new user sees of a real ``sluice standalone`` (issue 14, item 8): active
topics after a restart, the file connectors' progress in their status, the log's
word on keys nothing reads and on a refused pipeline file."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for_rest,
)

UNUSED_WARNING = "keys nothing reads, ignored (as Kafka Connect ignores unknown keys)"


def _topics(worker: StandaloneProcess, name: str) -> list[str]:
    response = worker.http.get(f"/connectors/{name}/topics")
    assert response.status_code == 200, response.text
    return list(response.json()[name]["topics"])


def _task_details(worker: StandaloneProcess, name: str) -> dict[str, object]:
    status = worker.status(name)
    assert status is not None and len(status["tasks"]) == 1, status
    return dict(status["tasks"][0].get("details", {}))


def _cli(worker: StandaloneProcess, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", *args, "--url", worker.url],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_active_topics_survive_a_restart(
    fresh_worker: Callable[..., StandaloneProcess], tmp_path: Path
) -> None:
    worker = fresh_worker()
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(10)))
    worker.start()
    worker.write_pipeline("src", file_source("src", source, "kept"))
    worker.write_pipeline("sink", file_sink("sink", out, "kept"))
    wait_for_rest(lambda: len(read_lines(out)) == 10, "the lines in the sink's file")
    assert _topics(worker, "src") == ["kept"] and _topics(worker, "sink") == ["kept"]
    size = source.stat().st_size
    assert _task_details(worker, "src") == {
        "file": str(source), "position": size, "lines_read": 10
    }
    assert _task_details(worker, "sink") == {"file": str(out), "lines_written": 10}
    shown = _cli(worker, "connectors", "status", "src")
    assert f"file={source} position={size} lines_read=10" in shown

    assert worker.stop() == 0, worker.log_text()
    worker.start()  # no new lines: nothing uses a topic in this run
    worker.wait_running("src")
    assert _topics(worker, "src") == ["kept"], worker.log_text()
    assert _topics(worker, "sink") == ["kept"]
    # The source resumes at the committed position, with nothing read in this run.
    assert _task_details(worker, "src") == {
        "file": str(source), "position": size, "lines_read": 0
    }

    assert worker.http.put("/connectors/src/topics/reset").status_code == 202
    assert worker.stop() == 0, worker.log_text()
    worker.start()
    worker.wait_running("src")
    assert _topics(worker, "src") == []  # a reset is kept too
    assert _topics(worker, "sink") == ["kept"]


def test_the_log_names_unused_keys_once_and_bad_values(
    fresh_worker: Callable[..., StandaloneProcess], tmp_path: Path
) -> None:
    worker = fresh_worker()
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    worker.start()
    worker.write_pipeline(
        "typos", file_source("typos", source, "t", **{"bogus.key": "1", "batch.sise": "5"})
    )
    worker.write_pipeline("bad", file_source("bad", source, "t2", **{"tasks.max": "abc"}))
    worker.wait_running("typos")
    wait_for_rest(lambda: worker.state("bad") == "FAILED", "the bad pipeline FAILED")
    assert worker.stop() == 0, worker.log_text()

    log = worker.log_text()
    warnings = [line for line in log.splitlines() if UNUSED_WARNING in line]
    assert len(warnings) == 1, log
    assert "WARN" in warnings[0] and "typos" in warnings[0]
    assert warnings[0].endswith("batch.sise, bogus.key")
    refused = [line for line in log.splitlines() if "'bad'" in line and "tasks.max" in line]
    assert refused and "(got 'abc')" in refused[0], log
