"""ExtractField, HoistField, ValueToKey and SetSchemaMetadata: whole-shape changes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, INT64, OPTIONAL_STRING, STRING, Schema, SchemaType, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from transforms.hoist_field import HoistFieldKey, HoistFieldValue
from transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue
from transforms.value_to_key import ValueToKey

ADDRESS = struct(("city", STRING), ("zip", OPTIONAL_STRING), optional=True)
CUSTOMER = struct(("id", INT64), ("address", ADDRESS), ("a.b", INT32), name="customer")
ROW = {"id": 1, "address": {"city": "Oslo", "zip": None}, "a.b": 3}


def test_extract_field_key_schemaless() -> None:
    check(
        "transforms=k\ntransforms.k.type=ExtractField$Key\ntransforms.k.field=id",
        [rec("v", key={"id": 7, "x": 1}), rec("v", key={"x": 1})],
        [rec("v", key=7), rec("v", key=None)],
    )


def test_extract_field_v1_names_may_contain_dots() -> None:
    check(
        "field=a.b",
        [rec(ROW, value_schema=CUSTOMER)],
        [rec(3, value_schema=INT32)],
        ExtractFieldValue,
    )


def test_extract_field_v2_nested_paths() -> None:
    options = "field=address.city\nfield.syntax.version=V2"
    check(
        options,
        [rec(ROW), rec({"address": None}), rec({"address": "flat"})],
        [rec("Oslo"), rec(None), rec(None)],
        cls=ExtractFieldValue,
    )
    # The city is optional in the result because its struct is.
    check(
        options,
        [rec(ROW, value_schema=CUSTOMER)],
        [rec("Oslo", value_schema=STRING.as_optional())],
        ExtractFieldValue,
    )


def test_extract_field_v2_backticks_quote_dots() -> None:
    check(
        "field=`a.b`\nfield.syntax.version=V2",
        [rec(ROW, value_schema=CUSTOMER)],
        [rec(3, value_schema=INT32)],
        cls=ExtractFieldValue,
    )


def test_extract_field_null_takes_the_default() -> None:
    schema = struct(("n", Schema(SchemaType.INT32, optional=True, default=5)))
    check(
        "field=n",
        [rec({"n": None}, value_schema=schema)],
        [rec(5, value_schema=schema.fields[0].schema)],
        ExtractFieldValue,
    )


def test_extract_field_errors() -> None:
    with pytest.raises(DataError, match="the schema has no field 'nope'"):
        run("field=nope", [rec(ROW, value_schema=CUSTOMER)], cls=ExtractFieldValue)
    with pytest.raises(DataError, match=r"ExtractField\$Key: expected a map value"):
        run("field=id", [rec(1, key=5)], cls=ExtractFieldKey)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("a..b", "empty field name"),
        ("a.", "ends with '.'"),
        ("`a", "unclosed backtick"),
        ("`a`b", "expected '.'"),
    ],
)
def test_extract_field_bad_v2_paths(path: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run({"field": path, "field.syntax.version": "V2"}, [], cls=ExtractFieldValue)


def test_hoist_field_wraps_values_and_nulls() -> None:
    check(
        "field=line",
        [rec("hello"), rec(None)],
        [rec({"line": "hello"}), rec({"line": None})],
        cls=HoistFieldValue,
    )


def test_hoist_field_key_with_schema() -> None:
    check(
        "field=id",
        [rec("v", key=3, key_schema=INT32)],
        [rec("v", key={"id": 3}, key_schema=struct(("id", INT32)))],
        cls=HoistFieldKey,
    )


def test_value_to_key() -> None:
    check(
        "transforms=k\ntransforms.k.type=org.apache.kafka.connect.transforms.ValueToKey\n"
        "transforms.k.fields=id,region",
        [rec({"id": 1, "region": "eu", "x": 0}), rec(None, key="kept")],
        [
            rec({"id": 1, "region": "eu", "x": 0}, key={"id": 1, "region": "eu"}),
            rec(None, key="kept"),
        ],
    )


def test_value_to_key_with_schema() -> None:
    check(
        "fields=id",
        [rec(ROW, value_schema=CUSTOMER)],
        [rec(ROW, value_schema=CUSTOMER, key={"id": 1}, key_schema=struct(("id", INT64)))],
        cls=ValueToKey,
    )
    with pytest.raises(DataError, match="no field 'nope'"):
        run("fields=nope", [rec(ROW, value_schema=CUSTOMER)], cls=ValueToKey)


def test_set_schema_metadata() -> None:
    renamed = replace(CUSTOMER, name="com.acme.Customer", version=3)
    check(
        "schema.name=com.acme.Customer\nschema.version=3",
        [rec(ROW, value_schema=CUSTOMER), rec(None, value_schema=CUSTOMER), rec(None)],
        [
            rec(ROW, value_schema=renamed),
            rec(None, value_schema=renamed),
            rec(None),
        ],
        cls=SetSchemaMetadataValue,
    )


def test_set_schema_metadata_needs_a_schema() -> None:
    with pytest.raises(DataError, match=r"SetSchemaMetadata\$Key: the record's key has no schema"):
        run("schema.name=x", [rec(1, key="k")], cls=SetSchemaMetadataKey)
    with pytest.raises(ConfigError, match=r"set schema.name, schema.version or both"):
        run("", [], cls=SetSchemaMetadataValue)
    with pytest.raises(ConfigError, match=r"schema.version: Input should be a valid integer"):
        run("schema.version=v2", [], cls=SetSchemaMetadataValue)
