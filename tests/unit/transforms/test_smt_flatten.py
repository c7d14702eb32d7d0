"""Flatten$Key / $Value."""

from __future__ import annotations

import pytest

from connectors.api import DataError
from connectors.api.schema import INT32, INT64, STRING, Schema, SchemaType, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.flatten import FlattenKey, FlattenValue


def test_schemaless_nested_maps() -> None:
    check(
        "transforms=f\ntransforms.f.type=Flatten$Value",
        [rec({"id": 1, "a": {"b": {"c": 2}, "d": [1, {"x": 1}]}, "empty": {}, "n": None})],
        [rec({"id": 1, "a.b.c": 2, "a.d": [1, {"x": 1}], "n": None})],
    )


def test_delimiter_and_key() -> None:
    check("delimiter=_", [rec(1, key={"a": {"b": 1}})], [rec(1, key={"a_b": 1})], cls=FlattenKey)


def test_with_schema_optional_parents_make_optional_fields() -> None:
    inner = struct(("x", INT32), ("y", STRING), optional=True)
    tags = Schema(SchemaType.ARRAY, value_schema=STRING)
    schema = struct(("id", INT64), ("inner", inner), ("tags", tags), name="row")
    flat = struct(
        ("id", INT64),
        ("inner_x", INT32.as_optional()),
        ("inner_y", STRING.as_optional()),
        ("tags", tags),
        name="row",
    )
    check(
        "delimiter=_",
        [
            rec({"id": 1, "inner": {"x": 2, "y": "b"}, "tags": ["a"]}, value_schema=schema),
            rec({"id": 2, "inner": None, "tags": []}, value_schema=schema),
        ],
        [
            rec({"id": 1, "inner_x": 2, "inner_y": "b", "tags": ["a"]}, value_schema=flat),
            rec({"id": 2, "inner_x": None, "inner_y": None, "tags": []}, value_schema=flat),
        ],
        cls=FlattenValue,
    )


def test_name_collisions_are_data_errors() -> None:
    with pytest.raises(DataError, match=r"two fields flatten to the name 'a\.b'"):
        run("", [rec({"a": {"b": 1}, "a.b": 2})], cls=FlattenValue)
    schema = struct(("a", struct(("b", INT32))), ("a.b", INT32))
    with pytest.raises(DataError, match=r"two fields flatten to the name 'a\.b'"):
        run("", [rec({"a": {"b": 1}, "a.b": 2}, value_schema=schema)], cls=FlattenValue)


def test_tombstone_passes() -> None:
    check("", [rec(None)], [rec(None)], cls=FlattenValue)
