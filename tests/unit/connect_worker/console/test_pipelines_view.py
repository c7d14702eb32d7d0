"""The console's pipeline files folder: each file with the problems `sluice validate` finds."""

from __future__ import annotations

from pathlib import Path

from connect_worker.console.pipelines_view import pipeline_files
from connect_worker.plugins import PluginRegistry


def test_each_file_with_its_problems(tmp_path: Path) -> None:
    (tmp_path / "good.properties").write_text(
        "connector.class=FileStreamSource\nfile=/tmp/in.txt\ntopic=t\n"
    )
    (tmp_path / "no-class.properties").write_text("name=x\n")
    (tmp_path / "bad-value.properties").write_text(
        "connector.class=FileStreamSource\nfile=/tmp/in.txt\ntopic=t\ntasks.max=lots\n"
    )
    (tmp_path / ".hidden.properties").write_text("junk")
    (tmp_path / "notes.txt").write_text("not a pipeline")
    folder = pipeline_files(tmp_path, PluginRegistry.load(), {})
    files = {f["file"]: f for f in folder["files"]}
    assert sorted(files) == ["bad-value.properties", "good.properties", "no-class.properties"]
    assert files["good.properties"]["problems"] == []
    assert files["good.properties"]["connector"] == "good"
    assert files["good.properties"]["connector_class"] == "FileStreamSource"
    assert "connector.class is missing" in files["no-class.properties"]["problems"][0]
    assert any("tasks.max" in p for p in files["bad-value.properties"]["problems"])


def test_a_missing_folder_is_said_so(tmp_path: Path) -> None:
    folder = pipeline_files(tmp_path / "nowhere", PluginRegistry.load(), {})
    assert folder["exists"] is False and folder["files"] == []
