"""InsertField$Key / $Value."""

from __future__ import annotations

import datetime as dt

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, INT64, OPTIONAL_STRING, STRING, Schema, SchemaType, struct
from tests.unit.transforms.smt_harness import check, rec, run, sink_rec
from transforms._schemas import timestamp_schema
from transforms.insert_field import InsertFieldKey, InsertFieldValue

ALL_FIELDS = """
transforms=meta
transforms.meta.type=org.apache.kafka.connect.transforms.InsertField$Value
transforms.meta.topic.field=_topic
transforms.meta.partition.field=_partition
transforms.meta.offset.field=_offset
transforms.meta.timestamp.field=_ts
transforms.meta.static.field=_source
transforms.meta.static.value=db1
"""


def test_schemaless_value_gets_metadata_and_static_field() -> None:
    check(
        ALL_FIELDS,
        [sink_rec({"id": 1}, timestamp=1_700_000_000_000)],
        [
            sink_rec(
                {
                    "id": 1,
                    "_topic": "t",
                    "_partition": 0,
                    "_offset": 42,
                    "_ts": 1_700_000_000_000,
                    "_source": "db1",
                },
                timestamp=1_700_000_000_000,
            )
        ],
    )


def test_schemaless_key_and_missing_partition_and_timestamp_are_skipped() -> None:
    check(
        "topic.field=t\npartition.field=p\ntimestamp.field=ts",
        [rec("v", key={"id": 1})],
        [rec("v", key={"id": 1, "t": "t"})],
        cls=InsertFieldKey,
    )


def test_input_dict_is_not_modified() -> None:
    value = {"id": 1}
    run("static.field=s\nstatic.value=x", [rec(value)], cls=InsertFieldValue)
    assert value == {"id": 1}


def test_with_schema_appends_optional_fields_and_required_ones_with_bang() -> None:
    schema = struct(("id", INT32), name="row", optional=False)
    expected_schema = struct(
        ("id", INT32),
        ("_topic", STRING),
        ("_offset", INT64.as_optional()),
        ("_ts", timestamp_schema(optional=True)),
        ("_source", OPTIONAL_STRING),
        name="row",
    )
    check(
        "topic.field=_topic!\noffset.field=_offset?\ntimestamp.field=_ts\n"
        "static.field=_source\nstatic.value=db1",
        [sink_rec({"id": 7}, value_schema=schema, timestamp=1000)],
        [
            sink_rec(
                {
                    "id": 7,
                    "_topic": "t",
                    "_offset": 42,
                    "_ts": dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC),
                    "_source": "db1",
                },
                value_schema=expected_schema,
                timestamp=1000,
            )
        ],
        cls=InsertFieldValue,
    )


def test_tombstones_pass_through() -> None:
    check(ALL_FIELDS, [sink_rec(None)], [sink_rec(None)])


def test_required_field_without_a_value_is_a_data_error() -> None:
    schema = struct(("id", INT32))
    with pytest.raises(DataError, match="required field 'ts'"):
        run("timestamp.field=ts!", [rec({"id": 1}, value_schema=schema)], cls=InsertFieldValue)


def test_offset_needs_a_sink_record() -> None:
    with pytest.raises(DataError, match=r"InsertField\$Value: offset.field needs a sink record"):
        run("offset.field=o", [rec({"id": 1})], cls=InsertFieldValue)


def test_non_map_value_is_a_data_error() -> None:
    with pytest.raises(DataError, match="expected a map value without a schema, got str"):
        run("topic.field=t", [rec("text")], cls=InsertFieldValue)


def test_non_struct_schema_is_a_data_error() -> None:
    with pytest.raises(DataError, match="expected a struct schema, got string"):
        run(
            "topic.field=t",
            [rec("x", value_schema=Schema(SchemaType.STRING))],
            cls=InsertFieldValue,
        )


def test_field_already_in_schema_is_a_data_error() -> None:
    with pytest.raises(DataError, match="already has a field 'id'"):
        run(
            "topic.field=id",
            [rec({"id": 1}, value_schema=struct(("id", INT32)))],
            cls=InsertFieldValue,
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "nothing to insert"),
        ("static.value=x", "nothing to insert"),
        ("topic.field=t\nstatic.value=x", "static.value is set but static.field"),
        ("topic.field=!", "'!' is not a field name"),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=InsertFieldValue)
