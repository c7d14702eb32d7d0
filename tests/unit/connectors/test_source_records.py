"""``source_records`` builds the same records as the constructor, only cheaper."""

from __future__ import annotations

import dataclasses

import pytest

from connectors.api import Schema, SchemaType, SourceRecord, source_records, struct


def test_the_records_equal_constructor_built_ones() -> None:
    schema = struct(("id", Schema(SchemaType.INT64)), name="row")
    key_schema = Schema(SchemaType.STRING)
    values = [{"id": n} for n in range(3)]
    partition = {"table": "orders"}
    built = source_records(
        "orders", values, value_schema=schema, source_partition=partition,
        keys=["a", "b", "c"], key_schema=key_schema,
    )
    expected = [
        SourceRecord(topic="orders", key=k, value=v, key_schema=key_schema,
                     value_schema=schema, source_partition=partition)
        for k, v in zip(["a", "b", "c"], values, strict=True)
    ]
    assert built == expected
    assert [r.value for r in built] == values
    assert all(r.source_offset is None and r.headers == () for r in built)


def test_without_keys_every_key_is_none_and_records_stay_immutable() -> None:
    built = source_records("t", ["x", "y"])
    assert [(r.topic, r.key, r.value, r.value_schema) for r in built] == [
        ("t", None, "x", None), ("t", None, "y", None),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built[0].value = "z"  # type: ignore[misc]
    last = built[-1].replace(source_offset={"n": 2})
    assert last.source_offset == {"n": 2} and last.value == "y"


def test_no_values_no_records() -> None:
    assert source_records("t", []) == []
