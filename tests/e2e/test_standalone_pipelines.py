"""Drop-a-file pipelines and the CLI clients, against a running ``sluice standalone``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for_rest,
)


def sluice(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "connect_worker.cli", "--log-level", "warning", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd)


def test_drop_edit_and_delete_pipeline_files(worker: StandaloneProcess, tmp_path: Path) -> None:
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"first {i}\n" for i in range(20)))
    worker.write_pipeline("drop-src", file_source("drop-src", source, "drop"))
    worker.write_pipeline("drop-sink", file_sink("drop-sink", out, "drop"))
    worker.wait_running("drop-src")
    worker.wait_running("drop-sink")
    wait_for_rest(lambda: len(read_lines(out)) == 20, "the first lines in the sink's file")

    # the source follows its file as it grows
    with source.open("a") as grow:
        grow.write("".join(f"second {i}\n" for i in range(5)))
    wait_for_rest(lambda: len(read_lines(out)) == 25, "appended lines")

    # editing the sink's file restarts it with the new config: output goes elsewhere
    moved = tmp_path / "moved.txt"
    worker.write_pipeline("drop-sink", file_sink("drop-sink", moved, "drop"))
    wait_for_rest(
        lambda: worker.http.get("/connectors/drop-sink/config").json()["file"] == str(moved),
        "the edited config",
    )
    worker.wait_running("drop-sink")
    with source.open("a") as grow:
        grow.write("third 0\n")
    wait_for_rest(lambda: "third 0" in read_lines(moved), "a line written to the new output")

    (worker.pipelines / "drop-sink.properties").unlink()
    (worker.pipelines / "drop-src.properties").unlink()
    wait_for_rest(
        lambda: not {"drop-src", "drop-sink"} & set(worker.http.get("/connectors").json()),
        "the deleted files' connectors to disappear",
    )


def test_broken_pipeline_files_fail_alone(worker: StandaloneProcess, tmp_path: Path) -> None:
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"keep {i}\n" for i in range(10)))
    worker.write_pipeline("alive-src", file_source("alive-src", source, "alive"))
    worker.write_pipeline("alive-sink", file_sink("alive-sink", out, "alive"))
    wait_for_rest(lambda: len(read_lines(out)) == 10, "the good pipeline's first lines")

    good = file_source("x", source, "unused").replace("name=x\n", "")
    broken: dict[str, tuple[str | bytes, str]] = {
        "bad-noclass": ("tasks.max=1\ntopic=t\n", "connector.class is missing"),
        "bad-unknown": (good.replace("FileStreamSource", "NoSuchConnector"), "NoSuchConnector"),
        "bad-tasks": (good + "tasks.max=abc\n", "tasks.max"),
        "bad-continued": (good + "topic=half \\", "line continuation"),
        "bad-binary": (bytes(range(256)) * 64, "binary data"),
        "bad-huge": (b"# filler line of a pipeline file\n" * (50 * 1024 * 1024 // 33), "bytes"),
    }
    for name, (content, _) in broken.items():
        worker.write_pipeline(name, content)
    for name, (_, words) in broken.items():
        wait_for_rest(lambda n=name: worker.state(n) == "FAILED", f"{name} FAILED")
        status = worker.status(name)
        assert status is not None
        trace = status["connector"].get("trace", "")
        assert words in trace and f"{name}.properties" in trace, (name, trace)

    # the good pipeline kept flowing, and the CLI shows the failures
    with source.open("a") as grow:
        grow.write("after the broken files\n")
    wait_for_rest(lambda: "after the broken files" in read_lines(out), "the good pipeline to flow")
    listing = sluice("connectors", "list", "--url", worker.url)
    assert listing.returncode == 0, listing.stderr
    rows = {line.split()[0]: line.split() for line in listing.stdout.splitlines()[1:]}
    assert rows["bad-tasks"][2] == "FAILED" and rows["alive-src"][2] == "RUNNING"
    status = sluice("connectors", "status", "bad-binary", "--url", worker.url)
    assert "FAILED" in status.stdout and "binary data" in status.stdout

    # fixing a file replaces its FAILED placeholder; deleting one removes it
    worker.write_pipeline("bad-tasks", good + "tasks.max=1\n")
    worker.wait_running("bad-tasks")
    for name in broken:
        (worker.pipelines / f"{name}.properties").unlink()
    wait_for_rest(
        lambda: not set(broken) & set(worker.http.get("/connectors").json()),
        "the broken files' connectors to go",
    )


def test_cli_rest_clients(worker: StandaloneProcess, tmp_path: Path) -> None:
    url = ["--url", worker.url]
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    pipeline = tmp_path / "cli-made.properties"
    pipeline.write_text(file_source("cli-made", source, "cli").replace("name=cli-made\n", ""))

    created = sluice("connectors", "create", str(pipeline), *url)
    assert created.returncode == 0 and "cli-made" in created.stdout, created.stderr
    again = sluice("connectors", "create", str(pipeline), *url)
    assert again.returncode == 1 and "409" in again.stderr
    worker.wait_running("cli-made")
    status = sluice("connectors", "status", "cli-made", *url)
    assert status.returncode == 0 and "RUNNING" in status.stdout

    assert sluice("connectors", "pause", "cli-made", *url).returncode == 0
    wait_for_rest(lambda: worker.state("cli-made") == "PAUSED", "PAUSED")
    assert sluice("connectors", "resume", "cli-made", *url).returncode == 0
    worker.wait_running("cli-made")
    assert sluice("connectors", "stop", "cli-made", *url).returncode == 0
    wait_for_rest(lambda: worker.state("cli-made") == "STOPPED", "STOPPED")
    restart = sluice("connectors", "restart", "cli-made", "--include-tasks", *url)
    assert restart.returncode == 0, restart.stderr
    assert sluice("connectors", "resume", "cli-made", *url).returncode == 0
    worker.wait_running("cli-made")
    restart = sluice("connectors", "restart", "cli-made", "--include-tasks", "--only-failed", *url)
    assert restart.returncode == 0 and "cli-made" in restart.stdout, restart.stderr
    assert sluice("connectors", "delete", "cli-made", *url).returncode == 0
    missing = sluice("connectors", "status", "cli-made", *url)
    assert missing.returncode == 1 and "404" in missing.stderr

    plugins = sluice("plugins", "list", *url)
    assert plugins.returncode == 0 and "FileStreamSourceConnector" in plugins.stdout
    assert "converter" in sluice("plugins", "list", "--all", *url).stdout
    unreachable = sluice("connectors", "list", "--url", "http://127.0.0.1:1")
    assert unreachable.returncode == 1 and "cannot reach" in unreachable.stderr


def test_validate_dry_run(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    good = tmp_path / "good.properties"
    good.write_text(file_source("good", source, "t"))
    done = sluice("validate", str(good))
    assert done.returncode == 0 and "OK" in done.stdout, done.stdout + done.stderr
    assert "nothing reads" not in done.stdout

    # Keys nothing reads (a Confluent option we lack, a typo) are a note, not a problem;
    # client overrides and converter settings are read.
    extra = tmp_path / "extra.properties"
    extra.write_text(file_source("extra", source, "t") + "file.encodng=utf-8\n"
                     "exactly.once.support=required\nproducer.override.linger.ms=5\n"
                     "value.converter.schemas.enable=false\n")
    done = sluice("validate", str(extra))
    assert done.returncode == 0 and "OK" in done.stdout, done.stdout + done.stderr
    assert ("note: keys nothing reads, ignored (as Kafka Connect ignores unknown keys): "
            "exactly.once.support, file.encodng") in done.stdout

    bad = tmp_path / "bad.properties"
    bad.write_text(file_source("bad", source, "t") + "tasks.max=abc\nbatch.size=-1\n")
    done = sluice("validate", str(bad))
    assert done.returncode == 1
    assert "tasks.max" in done.stdout and "batch.size" in done.stdout, done.stdout

    missing_file = tmp_path / "unreadable.properties"
    missing_file.write_text(file_source("unreadable", tmp_path / "nope" / "in.txt", "t"))
    done = sluice("validate", str(missing_file))
    assert done.returncode == 1 and "check" in done.stdout, done.stdout

    garbage = tmp_path / "garbage.properties"
    garbage.write_bytes(b"\x00\x01\x02")
    done = sluice("validate", str(garbage))
    assert done.returncode == 1 and "binary data" in done.stdout


def test_cli_create_refuses_bad_names(worker: StandaloneProcess, tmp_path: Path) -> None:
    pipeline = tmp_path / "slashed.properties"
    pipeline.write_text(file_source("a/b", tmp_path / "in.txt", "cli"))
    created = sluice("connectors", "create", str(pipeline), "--url", worker.url)
    assert created.returncode != 0 and "Invalid connector name 'a/b'" in created.stderr
    assert "a/b" not in worker.http.get("/connectors").json()
