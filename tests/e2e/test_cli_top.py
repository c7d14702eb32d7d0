"""``sluice top`` against a real worker: ``--once`` with a running and a failed pipeline,
and the live view redrawn on a (pseudo-)terminal until Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    properties,
    read_lines,
    wait_for_rest,
)


def top(worker: StandaloneProcess, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", "top", "--once", "--url", worker.url,
         *extra], capture_output=True, text=True, timeout=60,
    )


def test_top_once_shows_states_rates_and_the_failure(
    worker: StandaloneProcess, tmp_path: Path
) -> None:
    good_in, good_out, bad_in = tmp_path / "in.txt", tmp_path / "out.txt", tmp_path / "bad.txt"
    good_in.write_text("".join(f"line {i}\n" for i in range(40)))
    bad_in.write_text("not json\n")
    worker.write_pipeline("top-src", file_source("top-src", good_in, "top-moved"))
    worker.write_pipeline("top-snk", file_sink("top-snk", good_out, "top-moved"))
    worker.write_pipeline("top-bad-src", file_source("top-bad-src", bad_in, "top-bad"))
    worker.write_pipeline("top-bad", properties(
        name="top-bad", connector_class="FileStreamSink", file=str(tmp_path / "never.txt"),
        topics="top-bad", value_converter="org.apache.kafka.connect.json.JsonConverter",
    ))
    wait_for_rest(lambda: len(read_lines(good_out)) == 40, "the 40 lines copied")

    def bad_task_failed() -> bool:
        status = worker.status("top-bad") or {}
        return [t["state"] for t in status.get("tasks", [])] == ["FAILED"]

    wait_for_rest(bad_task_failed, "the bad sink's task failed")

    as_json = top(worker, "--json")
    assert as_json.returncode == 0, as_json.stderr
    rows = {row["connector"]: row for row in json.loads(as_json.stdout)}
    assert rows["top-src"]["state"] == "RUNNING" and rows["top-src"]["type"] == "source"
    assert rows["top-src"]["in_rate"] > 0 and rows["top-src"]["out_rate"] > 0
    assert rows["top-snk"]["state"] == "RUNNING" and rows["top-snk"]["lag"] == "0 rec"
    assert rows["top-bad"]["state"] == "FAILED" and rows["top-bad"]["errors"] >= 1
    assert rows["top-bad"]["trace"]

    frame = top(worker)
    assert frame.returncode == 0, frame.stderr
    lines = frame.stdout.splitlines()
    assert lines[0].startswith(f"sluice top  {worker.url}")
    assert "4 connectors, 4 tasks (1 failed, 3 running)" in lines[0]
    bad = next(line for line in lines if line.startswith("top-bad "))
    assert bad.split()[:4] == ["top-bad", "0", "sink", "FAILED"]
    failed = lines[lines.index("failed:") + 1]  # the error line of the task's trace
    assert failed.startswith("  top-bad/0: ") and "ToleranceExceededError" in failed
    assert "\x1b[" not in frame.stdout  # not a terminal: no colours


def test_top_redraws_on_a_terminal_until_ctrl_c(worker: StandaloneProcess) -> None:
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "connect_worker.cli", "top", "--interval", "0.2",
         "--url", worker.url], stdout=slave, stderr=slave,
    )
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while seen.count(b"sluice top") < 3 and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                seen += os.read(master, 65536)
        assert seen.count(b"sluice top") >= 3, seen  # the first frame and two redraws
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    assert b"\x1b[" in seen  # a terminal: drawn with colours and cursor moves
