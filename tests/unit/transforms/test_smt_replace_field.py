"""ReplaceField$Key / $Value."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, OPTIONAL_STRING, STRING, Schema, SchemaType, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue

ROW = {"id": 1, "name": "ann", "password": "x", "email": "a@b"}


def test_exclude_and_rename_schemaless() -> None:
    check(
        """
        transforms=clean
        transforms.clean.type=ReplaceField$Value
        transforms.clean.exclude=password
        transforms.clean.renames=name:full_name, email:mail
        """,
        [rec(ROW)],
        [rec({"id": 1, "full_name": "ann", "mail": "a@b"})],
    )


def test_include_keeps_only_listed_fields() -> None:
    check("include=id,email", [rec(ROW)], [rec({"id": 1, "email": "a@b"})], cls=ReplaceFieldValue)


def test_old_whitelist_and_blacklist_names() -> None:
    check("whitelist=id,name", [rec(ROW)], [rec({"id": 1, "name": "ann"})], cls=ReplaceFieldValue)
    check(
        "blacklist=password,email",
        [rec(ROW)],
        [rec({"id": 1, "name": "ann"})],
        cls=ReplaceFieldValue,
    )


def test_key() -> None:
    check(
        "renames=id:pk", [rec("v", key={"id": 3})], [rec("v", key={"pk": 3})], cls=ReplaceFieldKey
    )


def test_with_schema_keeps_order_and_renames_fields() -> None:
    schema = struct(
        ("id", INT32), ("name", STRING), ("password", STRING), ("note", OPTIONAL_STRING), name="u"
    )
    new_schema = struct(("id", INT32), ("full_name", STRING), ("note", OPTIONAL_STRING), name="u")
    check(
        "exclude=password\nrenames=name:full_name",
        [rec({"id": 1, "name": "ann", "password": "x", "note": None}, value_schema=schema)],
        [rec({"id": 1, "full_name": "ann", "note": None}, value_schema=new_schema)],
        cls=ReplaceFieldValue,
    )


def test_with_schema_null_takes_the_default_unless_disabled() -> None:
    with_default = Schema(SchemaType.STRING, optional=True, default="n/a")
    schema = struct(("id", INT32), ("note", with_default))
    record = rec({"id": 1, "note": None}, value_schema=schema)
    check(
        "exclude=x",
        [record],
        [rec({"id": 1, "note": "n/a"}, value_schema=schema)],
        ReplaceFieldValue,
    )
    check("exclude=x\nreplace.null.with.default=false", [record], [record], ReplaceFieldValue)


def test_rename_onto_an_existing_schema_field_is_a_data_error() -> None:
    schema = struct(("a", INT32), ("b", INT32))
    with pytest.raises(DataError, match="two fields the name 'b'"):
        run("renames=a:b", [rec({"a": 1, "b": 2}, value_schema=schema)], cls=ReplaceFieldValue)


def test_tombstone_passes() -> None:
    check("exclude=a", [rec(None)], [rec(None)], cls=ReplaceFieldValue)


def test_list_value_is_a_data_error() -> None:
    with pytest.raises(DataError, match=r"ReplaceField\$Value: expected a map value"):
        run("exclude=a", [rec([1, 2])], cls=ReplaceFieldValue)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("renames=a", "renames: 'a' is not a rename"),
        ("renames=a:b,a:c", "renames: a: renamed twice"),
        ("renames=a:c,b:c", "renames: c: the target of two renames"),
        ("include=a,b\nexclude=b", "include and exclude both list b"),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=ReplaceFieldValue)
