"""Cast$Key / $Value."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import (
    BOOLEAN,
    BYTES,
    FLOAT64,
    INT32,
    INT64,
    STRING,
    Schema,
    SchemaType,
    struct,
)
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.cast import CastKey, CastValue


def test_fields_schemaless() -> None:
    check(
        """
        transforms=c
        transforms.c.type=org.apache.kafka.connect.transforms.Cast$Value
        transforms.c.spec=n:int32, s:string, f:float64, b:boolean, big:int64, t:int8, gone:int16
        """,
        [rec({"n": "42", "s": 7, "f": "2.5", "b": "TRUE", "big": 3.9, "t": True, "x": "kept"})],
        [rec({"n": 42, "s": "7", "f": 2.5, "b": True, "big": 3, "t": 1, "x": "kept"})],
    )


@pytest.mark.parametrize(
    ("spec", "value", "expected"),
    [
        ("int64", "-12", -12),
        ("int16", 12.99, 12),
        ("float32", 3, 3.0),
        ("float64", "1e3", 1000.0),
        ("boolean", 0, False),
        ("boolean", 2.5, True),
        ("string", True, "true"),
        ("string", 1.5, "1.5"),
        ("string", Decimal("1.10"), "1.10"),
        ("string", b"\x00\xff", "AP8="),
        (
            "string",
            dt.datetime(2024, 3, 5, 1, 2, 3, 4000, tzinfo=dt.UTC),
            "2024-03-05T01:02:03.004Z",
        ),
        ("string", dt.date(2024, 3, 5), "2024-03-05"),
        ("int32", Decimal("7.9"), 7),
    ],
)
def test_whole_value(spec: str, value: object, expected: object) -> None:
    [out] = run(f"spec={spec}", [rec(value)], cls=CastValue)
    assert out.value == expected
    assert type(out.value) is type(expected)


def test_whole_key_with_schema() -> None:
    check(
        "spec=string",
        [rec("v", key=12, key_schema=INT32)],
        [rec("v", key="12", key_schema=STRING)],
        cls=CastKey,
    )


def test_fields_with_schema_change_types_keep_optionality_and_cast_defaults() -> None:
    schema = struct(
        ("id", INT64),
        ("price", Schema(SchemaType.STRING, optional=True, default="0")),
        ("ok", BOOLEAN),
        name="row",
    )
    new_schema = struct(
        ("id", STRING),
        ("price", Schema(SchemaType.FLOAT64, optional=True, default=0.0)),
        ("ok", BOOLEAN),
        name="row",
    )
    check(
        "spec=id:string,price:float64",
        [
            rec({"id": 9, "price": "1.25", "ok": True}, value_schema=schema),
            rec({"id": 10, "price": None, "ok": False}, value_schema=schema),
        ],
        [
            rec({"id": "9", "price": 1.25, "ok": True}, value_schema=new_schema),
            rec({"id": "10", "price": 0.0, "ok": False}, value_schema=new_schema),
        ],
        cls=CastValue,
    )


def test_tombstone_passes() -> None:
    check("spec=a:int32", [rec(None)], [rec(None)], cls=CastValue)


@pytest.mark.parametrize(
    ("spec", "value", "message"),
    [
        ("n:int8", {"n": 300}, r"Cast\$Value: field 'n': 300 is out of range for int8"),
        ("n:int32", {"n": "1.5"}, "field 'n': '1.5' is not an integer"),
        ("n:float64", {"n": "abc"}, "'abc' is not a number"),
        ("n:boolean", {"n": "yes"}, "'yes' is not 'true' or 'false'"),
        ("n:int32", {"n": [1]}, "cannot cast a list to int32"),
        ("n:int64", {"n": float("nan")}, "nan has no int64 value"),
        ("int32", "x", "the value: 'x' is not an integer"),
    ],
)
def test_values_that_cannot_be_cast(spec: str, value: object, message: str) -> None:
    with pytest.raises(DataError, match=message):
        run(f"spec={spec}", [rec(value)], cls=CastValue)


def test_casting_a_struct_field_with_schema_is_a_data_error() -> None:
    schema = struct(("inner", struct(("a", INT32))), ("b", BYTES), ("c", FLOAT64))
    with pytest.raises(DataError, match="field 'inner' is a struct; only primitives"):
        run("spec=inner:string", [rec({"inner": {"a": 1}}, value_schema=schema)], cls=CastValue)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "spec: is required"),
        ("spec=a:int99", "spec: unknown type 'int99'"),
        ("spec=varchar", "spec: unknown type 'varchar'"),
        ("spec=a:int32,b", "spec: 'b' is not a field:type pair"),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=CastValue)
