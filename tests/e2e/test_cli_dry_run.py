"""``sluice test PIPELINE.properties --input RECORDS.jsonl`` run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PIPELINE = """\
name=orders-out
connector.class=FileStreamSink
topics=orders
file=/tmp/never-written.txt
key.converter=StringConverter
value.converter=JsonConverter
value.converter.schemas.enable=false
errors.tolerance=all
transforms=tag,dropTests
transforms.tag.type=InsertField$Value
transforms.tag.static.field=origin
transforms.tag.static.value=shop
transforms.dropTests.type=Filter
transforms.dropTests.predicate=isTest
predicates=isTest
predicates.isTest.type=TopicNameMatches
predicates.isTest.pattern=test-.*
"""

RECORDS = [
    {"key": "k1", "value": {"id": 1}, "headers": {"trace": "abc"}, "timestamp": 1700000000000},
    {"topic": "test-orders", "key": "k2", "value": {"id": 2}},
    {"key": "k3", "value": "not json {"},
    {"key": "k4", "value": {"id": 4}},
]


def sluice(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "connect_worker.cli", "--log-level", "warning", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)


def test_sluice_test_prints_transformed_records_and_marks_failures(tmp_path: Path) -> None:
    pipeline, records = tmp_path / "orders.properties", tmp_path / "records.jsonl"
    pipeline.write_text(PIPELINE)
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    done = sluice("test", str(pipeline), "--input", str(records))
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["key"] for r in out] == ["k1", "k3", "k4"]  # k2 filtered
    assert out[0] == {
        "topic": "orders", "partition": 0, "key": "k1", "value": {"id": 1, "origin": "shop"},
        "headers": {"trace": "abc"}, "timestamp": 1700000000000, "offset": 0,
    }
    assert out[1]["value"] == "not json {"
    assert out[1]["error"]["stage"] == "VALUE_CONVERTER"
    assert out[1]["error"]["exception"] == "connectors.api.errors.DataError"
    assert out[2]["value"] == {"id": 4, "origin": "shop"}
    assert not Path("/tmp/never-written.txt").exists()


def test_sluice_test_says_a_bad_record_fails_the_task_without_tolerance(tmp_path: Path) -> None:
    """Issue 14: without errors.tolerance=all the worker would fail; so does sluice test."""
    pipeline, records = tmp_path / "orders.properties", tmp_path / "records.jsonl"
    pipeline.write_text(PIPELINE.replace("errors.tolerance=all\n", ""))
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    done = sluice("test", str(pipeline), "--input", str(records))
    assert done.returncode == 3, (done.stdout, done.stderr)
    failed = [json.loads(line) for line in done.stdout.splitlines()][1]
    assert failed["key"] == "k3" and failed["error"]["tolerated"] is False
    assert "the task fails at this record (errors.tolerance=none)" in failed["error"]["worker"]
    assert "record 3 (orders-0@2) would fail the task: VALUE_CONVERTER" in done.stderr
    assert "3 a record would fail the task" in " ".join(sluice("test", "--help").stdout.split())


def test_sluice_test_reads_stdin_and_reports_a_bad_config(tmp_path: Path) -> None:
    pipeline = tmp_path / "p.properties"
    pipeline.write_text(PIPELINE)
    done = sluice("test", str(pipeline), stdin='{"key": "a", "value": {"x": 1}}\n')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == {"x": 1, "origin": "shop"}

    pipeline.write_text(PIPELINE + "transforms.tag.type=Cast$Value\ntransforms.tag.spec=x:int99\n")
    bad = sluice("test", str(pipeline), stdin="")
    assert bad.returncode == 2
    assert "transforms.tag.spec: unknown type 'int99'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_sluice_test_expect_compares_and_names_differences(tmp_path: Path) -> None:
    pipeline, records = tmp_path / "orders.properties", tmp_path / "records.jsonl"
    expected = tmp_path / "expected.jsonl"
    pipeline.write_text(PIPELINE)
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    expected.write_text(
        '{"key": "k1", "value": {"id": 1, "origin": "shop"}}\n'
        '{"key": "k3", "error": {"stage": "VALUE_CONVERTER", "tolerated": true}}\n'
        '{"key": "k4", "value": {"id": 4, "origin": "shop"}}\n'
    )
    args = ("test", str(pipeline), "--input", str(records), "--expect", str(expected))
    assert sluice(*args).returncode == 0
    expected.write_text('{"key": "k1", "value": {"id": 1}}\n')
    wrong = sluice(*args)
    assert wrong.returncode == 1
    assert "expected 1 record(s), got 3" in wrong.stderr
    assert 'record 1: value: expected {"id": 1}' in wrong.stderr
