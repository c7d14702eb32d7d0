"""docs/writing-a-connector.md's sink, run as the page says: a module on ``plugin.path``.

The page's Python block becomes ``lines_sink.py`` in a plugin folder, its
properties block a pipeline file; a worker started with that ``plugin.path``
lists the connector and writes what kcat produces to the file the pipeline
names.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from harness.standalone_process import StandaloneProcess, read_lines, wait_for_rest

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "writing-a-connector.md").read_text()
KCAT = shutil.which("kcat") or "kcat"  # make test installs it; a missing kcat fails loudly


def block(language: str) -> str:
    """The page's one ``language`` code block that is a whole file (the first)."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```", PAGE, re.DOTALL | re.MULTILINE)
    assert blocks, f"no {language} block in docs/writing-a-connector.md"
    return str(blocks[0])


def test_the_pages_sink_runs_from_plugin_path(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "lines_sink.py").write_text(block("python"))
    pipeline = block("properties")
    assert "connector.class=LinesSink" in pipeline
    worker = StandaloneProcess(tmp_path, **{"plugin.path": str(plugins)}).start()
    try:
        names = [p["class"] for p in worker.http.get("/connector-plugins").json()]
        assert any("LinesSink" in name for name in names), names
        worker.write_pipeline("lines", pipeline)
        worker.wait_running("lines")
        subprocess.run(
            [KCAT, "-b", worker.bootstrap, "-t", "demo", "-P"],
            input=b"first\nsecond\n",
            check=True,
            timeout=60,
        )
        out = tmp_path / "data" / "out" / "lines.txt"
        wait_for_rest(lambda: read_lines(out) == ["first", "second"], "the sink's lines")
    finally:
        code = worker.stop()
        worker.close()
    assert code == 0, worker.log_text()
