"""DropHeaders, InsertHeader, HeaderFrom$Key / $Value."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, STRING, Schema, SchemaType, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.header_from import HeaderFromKey, HeaderFromValue
from transforms.headers import DropHeaders, InsertHeader


def test_drop_headers_removes_every_header_with_those_names() -> None:
    check(
        "transforms=d\ntransforms.d.type=DropHeaders\ntransforms.d.headers=trace, span",
        [rec(1, headers=(("trace", "a"), ("keep", 1), ("span", "b"), ("trace", "c")))],
        [rec(1, headers=(("keep", 1),))],
    )


def test_drop_headers_without_a_match_returns_the_same_record() -> None:
    record = rec(1, headers=(("keep", 1),))
    transform = DropHeaders()
    transform.configure({"headers": "trace"})
    assert transform.apply(record) is record


@pytest.mark.parametrize(
    ("literal", "value"),
    [("prod", "prod"), ("42", 42), ("-1.5", -1.5), ("true", True), ("FALSE", False), ("", "")],
)
def test_insert_header_reads_literals_as_kafka_does(literal: str, value: object) -> None:
    check(
        {"header": "env", "value.literal": literal},
        [rec(1, headers=(("a", 1),))],
        [rec(1, headers=(("a", 1), ("env", value)))],
        cls=InsertHeader,
    )


def test_header_from_value_copy_schemaless() -> None:
    check(
        """
        transforms=h
        transforms.h.type=org.apache.kafka.connect.transforms.HeaderFrom$Value
        transforms.h.fields=id,missing
        transforms.h.headers=row-id,none
        transforms.h.operation=copy
        """,
        [rec({"id": 5, "name": "a"})],
        [rec({"id": 5, "name": "a"}, headers=(("row-id", 5), ("none", None)))],
    )


def test_header_from_key_move_with_schema() -> None:
    schema = struct(("id", INT32), ("tenant", STRING), name="k")
    check(
        "fields=tenant\nheaders=tenant\noperation=move",
        [rec("v", key={"id": 1, "tenant": "acme"}, key_schema=schema)],
        [
            rec(
                "v",
                key={"id": 1},
                key_schema=struct(("id", INT32), name="k"),
                headers=(("tenant", "acme"),),
            )
        ],
        cls=HeaderFromKey,
    )


def test_header_from_null_field_gives_the_schema_default() -> None:
    schema = struct(("region", Schema(SchemaType.STRING, optional=True, default="eu")))
    check(
        "fields=region\nheaders=region\noperation=copy",
        [rec({"region": None}, value_schema=schema)],
        [rec({"region": None}, value_schema=schema, headers=(("region", "eu"),))],
        cls=HeaderFromValue,
    )


def test_header_from_tombstone_passes() -> None:
    check("fields=a\nheaders=a\noperation=move", [rec(None)], [rec(None)], cls=HeaderFromValue)


def test_header_from_unknown_schema_field_is_a_data_error() -> None:
    with pytest.raises(DataError, match=r"HeaderFrom\$Value: the schema has no field 'x'"):
        run(
            "fields=x\nheaders=x\noperation=copy",
            [rec({"id": 1}, value_schema=struct(("id", INT32)))],
            cls=HeaderFromValue,
        )


@pytest.mark.parametrize(
    ("cls", "options", "message"),
    [
        (DropHeaders, "", "headers: is required"),
        (InsertHeader, "header=x", "value.literal: is required"),
        (
            HeaderFromValue,
            "fields=a,b\nheaders=a\noperation=copy",
            "fields has 2 names and headers 1",
        ),
        (
            HeaderFromValue,
            "fields=a\nheaders=a\noperation=cut",
            "operation: Input should be 'move' or 'copy'",
        ),
        (HeaderFromValue, "fields=a\nheaders=a", "operation: is required"),
    ],
)
def test_bad_options(cls: type, options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=cls)
