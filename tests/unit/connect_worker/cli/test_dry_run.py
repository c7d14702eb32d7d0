"""Pipeline tests (``sluice test``) written as the issue asks: a properties
snippet, input records, expected records."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from connect_worker.cli.dry_run import InputError, Pipeline, mismatches, run_dry_run
from connect_worker.plugins import PluginRegistry
from connect_worker.properties import parse_properties
from connectors.api import ConfigError
from connectors.api.records import ConnectRecord
from transforms.api import Transformation


def run(registry: PluginRegistry, snippet: str, *records: dict[str, Any]) -> list[dict[str, Any]]:
    pipeline = Pipeline.from_props(parse_properties(snippet), registry)
    try:
        return list(pipeline.run(json.dumps(r) for r in records))
    finally:
        pipeline.close()


SINK = """
connector.class=FileStreamSink
topics=orders
file=/tmp/unused.txt
key.converter=StringConverter
value.converter=JsonConverter
value.converter.schemas.enable=false
"""

SOURCE = """
connector.class=FileStreamSource
topic=lines
file=/tmp/unused.txt
value.converter=StringConverter
"""


def test_sink_insert_field_and_a_filter_with_a_predicate(registry: PluginRegistry) -> None:
    snippet = SINK + """
transforms=tag,dropTests
transforms.tag.type=InsertField$Value
transforms.tag.static.field=origin
transforms.tag.static.value=shop
transforms.tag.topic.field=topic
transforms.dropTests.type=Filter
transforms.dropTests.predicate=isTest
predicates=isTest
predicates.isTest.type=TopicNameMatches
predicates.isTest.pattern=test-.*
"""
    out = run(
        registry,
        snippet,
        {"key": "k1", "value": {"id": 1}, "headers": {"h": "x"}, "timestamp": 17},
        {"topic": "test-orders", "key": "k2", "value": {"id": 2}},
        {"key": "k3", "value": {"id": 3}, "partition": 2, "offset": 41},
    )
    assert out == [
        {"topic": "orders", "partition": 0, "key": "k1",
         "value": {"id": 1, "origin": "shop", "topic": "orders"}, "headers": {"h": "x"},
         "timestamp": 17, "offset": 0},
        {"topic": "orders", "partition": 2, "key": "k3",
         "value": {"id": 3, "origin": "shop", "topic": "orders"}, "headers": {},
         "timestamp": None, "offset": 41},
    ]


def test_sink_poison_records_are_marked_with_their_error(registry: PluginRegistry) -> None:
    snippet = SINK + """
errors.tolerance=all
transforms=tag
transforms.tag.type=InsertField$Value
transforms.tag.static.field=origin
transforms.tag.static.value=shop
"""
    out = run(
        registry, snippet,
        {"key": "k1", "value": "not json {"},
        {"key": "k2", "value": [1, 2]},
        {"key": "k3", "value": {"ok": True}},
    )
    assert [r.get("error", {}).get("stage") for r in out] == [
        "VALUE_CONVERTER", "TRANSFORMATION", None,
    ]
    bad_json, bad_shape, good = out
    assert (bad_json["key"], bad_json["value"], bad_json["topic"]) == ("k1", "not json {", "orders")
    assert bad_json["error"]["class"].endswith("JsonConverter")
    assert bad_json["error"]["exception"] == "connectors.api.errors.DataError"
    assert bad_json["error"]["tolerated"] is True
    assert bad_shape["error"]["class"].endswith("InsertFieldValue")
    assert "expected a map" in bad_shape["error"]["message"]
    assert good["value"] == {"ok": True, "origin": "shop"}


def test_source_records_go_through_transforms_then_converters(registry: PluginRegistry) -> None:
    snippet = SOURCE + """
transforms=hoist,route,cast
transforms.hoist.type=HoistField$Value
transforms.hoist.field=line
transforms.route.type=RegexRouter
transforms.route.regex=(.*)
transforms.route.replacement=copy-$1
transforms.cast.type=Cast$Key
transforms.cast.spec=int32
"""
    out = run(
        registry, snippet,
        {"key": "7", "value": "hello", "source_partition": {"f": "a"},
         "source_offset": {"position": 6}},
        {"key": "seven", "value": "bad key"},
    )
    assert out[0] == {"topic": "copy-lines", "partition": None, "key": 7,
                      "value": {"line": "hello"}, "headers": {}, "timestamp": None}
    assert out[1]["error"]["stage"] == "TRANSFORMATION"
    assert out[1]["error"]["class"].endswith("CastKey")
    assert out[1]["value"] == "bad key"  # the connector's record, as the DLQ would get it


def test_source_converter_failures_are_errors_too(registry: PluginRegistry) -> None:
    snippet = SOURCE.replace("StringConverter", "ByteArrayConverter")
    [out] = run(registry, snippet, {"key": "k", "value": "text, not bytes"})
    assert out["error"]["stage"] == "VALUE_CONVERTER"
    assert out["error"]["class"].endswith("ByteArrayConverter")
    assert out["value"] == "text, not bytes"


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ("transforms=t\ntransforms.t.type=Nope\n", "transforms.t.type: unknown transformation"),
        ("transforms=t\ntransforms.t.type=Cast$Value\ntransforms.t.spec=a:int99\n",
         "transforms.t.spec: unknown type 'int99'"),
        ("transforms=t\ntransforms.t.type=RegexRouter\ntransforms.t.regex=([a\n"
         "transforms.t.replacement=x\n", "transforms.t.regex: not a valid regular expression"),
        ("transforms=t\ntransforms.t.type=ExtractField$Value\n",
         "transforms.t.field: is required"),
    ],
)
def test_a_bad_transform_config_names_its_key(
    registry: PluginRegistry, extra: str, fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace("[", r"\[")):
        Pipeline.from_props(parse_properties(SINK + extra), registry)


def test_bad_input_lines_are_reported_with_their_line(registry: PluginRegistry) -> None:
    pipeline = Pipeline.from_props(parse_properties(SINK), registry)
    with pytest.raises(InputError, match="line 2: not JSON"):
        list(pipeline.run(['{"value": 1}', "{nope"]))
    with pytest.raises(InputError, match="unknown field"):
        list(pipeline.run(['{"valeu": 1}']))


def test_run_pipeline_test_writes_json_lines(tmp_path: Path) -> None:
    pipeline = tmp_path / "p.properties"
    pipeline.write_text(SINK)
    records = tmp_path / "in.jsonl"
    records.write_text('{"key": "a", "value": {"x": 1}}\n\n{"key": "b", "value": "{"}\n')
    out = io.StringIO()
    assert run_dry_run(pipeline, records, out) == 3  # "b" would fail the task
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["key"] for line in lines] == ["a", "b"]
    assert "error" in lines[1] and "error" not in lines[0]


def test_expected_records_list_only_the_fields_they_check(tmp_path: Path) -> None:
    pipeline = tmp_path / "p.properties"
    pipeline.write_text(SINK + "transforms=t\ntransforms.t.type=HoistField$Value\n"
                        "transforms.t.field=wrapped\n")
    records = tmp_path / "in.jsonl"
    records.write_text('{"key": "a", "value": 1}\n{"key": "b", "value": "{"}\n')
    expect = tmp_path / "expected.jsonl"
    expect.write_text('{"key": "a", "value": {"wrapped": 1}}\n'
                      '{"key": "b", "error": {"stage": "VALUE_CONVERTER"}}\n')
    assert run_dry_run(pipeline, records, io.StringIO(), expect_file=expect) == 0

    expect.write_text('{"key": "a", "value": {"wrapped": 2}}\n')
    assert run_dry_run(pipeline, records, io.StringIO(), expect_file=expect) == 1
    assert mismatches([{"value": {"wrapped": 2}}], [{"value": {"wrapped": 1}}]) == [
        'record 1: value: expected {"wrapped": 2}, got {"wrapped": 1}'
    ]
    assert mismatches([], [{"value": 1}]) == ["expected 0 record(s), got 1"]


def test_a_bad_record_under_tolerance_none_fails_the_task(
    tmp_path: Path, registry: PluginRegistry, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 14: no ``errors.tolerance=all``: the record is not tolerated, the run fails."""
    [failed, good] = run(registry, SINK, {"key": "k1", "value": "oops"}, {"value": {"x": 1}})
    assert failed["error"]["tolerated"] is False
    assert failed["error"]["stage"] == "VALUE_CONVERTER"
    assert "the task fails at this record" in failed["error"]["worker"]
    assert "errors.tolerance=none" in failed["error"]["worker"]
    assert "error" not in good  # every record is shown, though the task would stop at k1

    pipeline, records = tmp_path / "p.properties", tmp_path / "in.jsonl"
    pipeline.write_text(SINK)
    records.write_text('{"value": {"x": 1}}\n{"key": "k1", "value": "oops", "offset": 7}\n')
    assert run_dry_run(pipeline, records, io.StringIO()) == 3
    err = capsys.readouterr().err
    assert "record 2 (orders-0@7) would fail the task" in err
    assert "VALUE_CONVERTER" in err and "errors.tolerance=none" in err


@pytest.mark.parametrize(
    ("extra", "fate"),
    [
        ("", "skipped and logged (no errors.deadletterqueue.topic.name)"),
        ("errors.deadletterqueue.topic.name=orders-dlq\n",
         "skipped and written to the dead-letter topic orders-dlq"),
    ],
)
def test_a_bad_record_under_tolerance_all_is_skipped(
    tmp_path: Path, registry: PluginRegistry, extra: str, fate: str
) -> None:
    snippet = SINK + "errors.tolerance=all\n" + extra
    [failed] = run(registry, snippet, {"key": "k1", "value": "oops"})
    assert failed["error"]["tolerated"] is True
    assert fate in failed["error"]["worker"]
    pipeline, records = tmp_path / "p.properties", tmp_path / "in.jsonl"
    pipeline.write_text(snippet)
    records.write_text('{"key": "k1", "value": "oops"}\n')
    assert run_dry_run(pipeline, records, io.StringIO()) == 0


class BuggyTransform(Transformation):
    """A transform with a bug: not a bad record, so no tolerance covers it."""

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        raise KeyError("a bug")


def test_a_bug_fails_the_task_whatever_the_tolerance(registry: PluginRegistry) -> None:
    snippet = SOURCE + f"errors.tolerance=all\ntransforms=t\ntransforms.t.type={__name__}" \
        ".BuggyTransform\n"
    [failed] = run(registry, snippet, {"value": "line"})
    assert failed["error"]["tolerated"] is False, failed
    assert "the task fails" in failed["error"]["worker"]
    assert "whatever errors.tolerance says" in failed["error"]["worker"]
