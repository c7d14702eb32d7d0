"""A ``sluice standalone`` worker on a broker that is not ours: Tansu.

Default worker settings but ``bootstrap.servers`` (no embedded broker): the
file source's producer is idempotent, the sink consumes in a group. Before the
client negotiated flexible versions, every source task restart-looped on
"cannot get a producer id: UNKNOWN_SERVER_ERROR: InitProducerId".
"""

from __future__ import annotations

from pathlib import Path

from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for,
)
from harness.tansu import TansuProcess

LINES = 500


def test_file_pipeline_on_tansu_with_default_settings(
    tansu: TansuProcess, tmp_path: Path
) -> None:
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(LINES)))
    worker = StandaloneProcess(tmp_path / "worker", **{"bootstrap.servers": tansu.bootstrap})
    try:
        worker.start()
        worker.write_pipeline("tansu-src", file_source("tansu-src", source, "tansu-lines"))
        worker.write_pipeline("tansu-sink", file_sink("tansu-sink", out, "tansu-lines"))
        worker.wait_running("tansu-src")
        worker.wait_running("tansu-sink")
        # Tansu holds a new group's first join for about 23 s (librdkafka sees the same)
        wait_for(lambda: len(read_lines(out)) == LINES, "every line in the sink's file", 120)
        with source.open("a") as grow:
            grow.write("after the first batch\n")
        wait_for(lambda: read_lines(out)[-1:] == ["after the first batch"], "an appended line")
        assert read_lines(out) == [f"line {i}" for i in range(LINES)] + ["after the first batch"]
        log = worker.log_text()
        assert "cannot get a producer id" not in log, log
        assert worker.running("tansu-src") and worker.running("tansu-sink")
    finally:
        code = worker.stop()
        worker.close()
    assert code == 0, worker.log_text()
