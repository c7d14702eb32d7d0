"""JsonConverter: Kafka Connect's envelope both ways, bare JSON, logical types, errors."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect_worker.converters import JsonConverter
from connect_worker.converters.json_values import DATE, DECIMAL, TIME, TIMESTAMP
from connectors.api import DataError, Schema, SchemaType, struct
from connectors.api.schema import INT32, OPTIONAL_STRING, STRING


def converter(**props: str) -> JsonConverter:
    conv = JsonConverter()
    conv.configure(props, is_key=False)
    return conv


def test_string_envelope_matches_kafka() -> None:
    data = converter().from_connect("t", STRING, "héllo")
    assert data == '{"schema":{"type":"string","optional":false},"payload":"héllo"}'.encode()
    assert converter().to_connect("t", data) == (STRING, "héllo")


def test_struct_envelope_shape() -> None:
    schema = struct(("id", INT32), ("name", OPTIONAL_STRING), name="com.example.User")
    data = converter().from_connect("t", schema, {"id": 7, "name": None})
    assert json.loads(data) == {
        "schema": {
            "type": "struct",
            "optional": False,
            "name": "com.example.User",
            "fields": [
                {"type": "int32", "optional": False, "field": "id"},
                {"type": "string", "optional": True, "field": "name"},
            ],
        },
        "payload": {"id": 7, "name": None},
    }


def test_reads_kafka_written_envelope() -> None:
    # As Kafka's JsonConverter writes a struct with bytes, map and array fields.
    text = (
        '{"schema":{"type":"struct","fields":['
        '{"type":"bytes","optional":false,"field":"b"},'
        '{"type":"map","keys":{"type":"string","optional":false},'
        '"values":{"type":"int64","optional":false},"optional":false,"field":"m"},'
        '{"type":"array","items":{"type":"double","optional":false},"optional":true,"field":"a"}'
        '],"optional":false,"name":"rec","version":2},'
        '"payload":{"b":"AAEC","m":{"x":1},"a":[1.5,2]}}'
    )
    schema, value = converter().to_connect("t", text.encode())
    assert schema is not None and schema.name == "rec" and schema.version == 2
    assert [f.name for f in schema.fields] == ["b", "m", "a"]
    assert value == {"b": b"\x00\x01\x02", "m": {"x": 1}, "a": [1.5, 2.0]}


def test_logical_types_as_kafka_encodes_them() -> None:
    decimal = Schema(SchemaType.BYTES, name=DECIMAL, parameters={"scale": "2"}, version=1)
    schema = struct(
        ("price", decimal),
        ("day", Schema(SchemaType.INT32, name=DATE, version=1)),
        ("at", Schema(SchemaType.INT32, name=TIME, version=1)),
        ("ts", Schema(SchemaType.INT64, name=TIMESTAMP, version=1)),
    )
    value = {
        "price": Decimal("-1.28"),
        "day": dt.date(1970, 1, 11),
        "at": dt.time(0, 0, 1, 500_000),
        "ts": dt.datetime(1970, 1, 1, 0, 0, 2, 5000, tzinfo=dt.UTC),
    }
    data = converter().from_connect("t", schema, value)
    payload = json.loads(data)["payload"]
    assert base64.b64decode(payload["price"]) == (-128).to_bytes(1, "big", signed=True)
    assert payload["day"] == 10 and payload["at"] == 1500 and payload["ts"] == 2005
    assert converter().to_connect("t", data) == (schema, value)


def test_decimal_with_too_many_digits_is_a_data_error() -> None:
    decimal = Schema(SchemaType.BYTES, name=DECIMAL, parameters={"scale": "1"})
    with pytest.raises(DataError, match="more than 1 digits"):
        converter().from_connect("t", decimal, Decimal("1.25"))


def test_null_handling() -> None:
    conv = converter()
    assert conv.from_connect("t", None, None) is None
    assert conv.to_connect("t", None) == (None, None)
    assert json.loads(conv.from_connect("t", OPTIONAL_STRING, None)) == {
        "schema": {"type": "string", "optional": True},
        "payload": None,
    }
    with pytest.raises(DataError, match="required"):
        conv.from_connect("t", STRING, None)
    defaulted = Schema(SchemaType.INT32, default=5)
    assert json.loads(conv.from_connect("t", defaulted, None))["payload"] == 5


def test_schemaless_inference() -> None:
    conv = converter()
    data = conv.from_connect("t", None, {"a": [1, 2.5, "x", None, True], "b": b"\xff"})
    assert json.loads(data) == {"schema": None, "payload": {"a": [1, 2.5, "x", None, True],
                                                            "b": "/w=="}}
    assert conv.to_connect("t", data) == (None, {"a": [1, 2.5, "x", None, True], "b": "/w=="})


def test_schemas_disabled_is_bare_json() -> None:
    conv = converter(**{"schemas.enable": "false"})
    assert conv.from_connect("t", STRING, "x") == b'"x"'
    assert conv.from_connect("t", None, {"k": 1}) == b'{"k":1}'
    assert conv.to_connect("t", b'{"k": [1, 2]}') == (None, {"k": [1, 2]})


def test_invalid_bytes_are_a_clear_data_error() -> None:
    with pytest.raises(DataError, match="not valid JSON"):
        converter().to_connect("orders", b"\xff\xfe not json")
    with pytest.raises(DataError, match=r"schemas\.enable=false"):
        converter().to_connect("orders", b'{"id": 1}')
    with pytest.raises(DataError, match="unknown schema type"):
        converter().to_connect("orders", b'{"schema": {"type": "int128"}, "payload": 1}')
    with pytest.raises(DataError, match="does not fit"):
        converter().to_connect("orders", b'{"schema": {"type": "int32"}, "payload": "x"}')


def test_value_not_matching_schema_is_a_data_error() -> None:
    with pytest.raises(DataError, match="does not fit"):
        converter().from_connect("t", INT32, "seven")
    with pytest.raises(DataError, match="does not fit in int8"):
        converter().from_connect("t", Schema(SchemaType.INT8), 300)


def test_map_with_non_string_keys_is_an_array_of_pairs() -> None:
    schema = Schema(SchemaType.MAP, key_schema=INT32, value_schema=STRING)
    data = converter().from_connect("t", schema, {1: "a", 2: "b"})
    assert json.loads(data)["payload"] == [[1, "a"], [2, "b"]]
    assert converter().to_connect("t", data) == (schema, {1: "a", 2: "b"})


# ------------------------------------------------------------ round trips

_PRIMITIVES: dict[SchemaType, st.SearchStrategy[Any]] = {
    SchemaType.INT8: st.integers(-(2**7), 2**7 - 1),
    SchemaType.INT16: st.integers(-(2**15), 2**15 - 1),
    SchemaType.INT32: st.integers(-(2**31), 2**31 - 1),
    SchemaType.INT64: st.integers(-(2**63), 2**63 - 1),
    SchemaType.FLOAT32: st.floats(allow_nan=False, allow_infinity=False, width=32),
    SchemaType.FLOAT64: st.floats(allow_nan=False, allow_infinity=False),
    SchemaType.BOOLEAN: st.booleans(),
    SchemaType.STRING: st.text(),
    SchemaType.BYTES: st.binary(),
}
_LOGICAL: dict[str, tuple[Schema, st.SearchStrategy[Any]]] = {
    DECIMAL: (
        Schema(SchemaType.BYTES, name=DECIMAL, parameters={"scale": "3"}),
        st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-(10**12),
                    max_value=10**12),
    ),
    DATE: (Schema(SchemaType.INT32, name=DATE), st.dates()),
    TIME: (
        Schema(SchemaType.INT32, name=TIME),
        st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    ),
    TIMESTAMP: (
        Schema(SchemaType.INT64, name=TIMESTAMP),
        st.datetimes(timezones=st.just(dt.UTC)).map(
            lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
        ),
    ),
}
_meta = st.fixed_dictionaries(
    {},
    optional={
        "optional": st.booleans(),
        "name": st.text(min_size=1, max_size=10),
        "version": st.integers(0, 100),
        "doc": st.text(max_size=10),
        "parameters": st.dictionaries(st.text(max_size=5), st.text(max_size=5), min_size=1,
                                      max_size=2),
    },
)
_leaf_schemas = st.one_of(
    st.builds(lambda t, meta: Schema(t, **meta), st.sampled_from(list(_PRIMITIVES)), _meta),
    st.sampled_from([schema for schema, _ in _LOGICAL.values()]),
)


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    fields = st.lists(
        st.tuples(st.text(min_size=1, max_size=6), children),
        min_size=1,
        max_size=4,
        unique_by=lambda item: item[0],
    )
    return st.one_of(
        children.map(lambda c: Schema(SchemaType.ARRAY, optional=True, value_schema=c)),
        children.map(lambda c: Schema(SchemaType.MAP, key_schema=STRING, value_schema=c)),
        fields.map(lambda items: struct(*items)),
    )


def values_for(schema: Schema) -> st.SearchStrategy[Any]:
    """Connect values that fit ``schema``."""
    if schema.name in _LOGICAL:
        values = _LOGICAL[schema.name][1]
    elif schema.type in _PRIMITIVES:
        values = _PRIMITIVES[schema.type]
    elif schema.type is SchemaType.ARRAY:
        assert schema.value_schema is not None
        values = st.lists(values_for(schema.value_schema), max_size=4)
    elif schema.type is SchemaType.MAP:
        assert schema.value_schema is not None
        values = st.dictionaries(st.text(max_size=5), values_for(schema.value_schema), max_size=3)
    else:
        values = st.fixed_dictionaries({f.name: values_for(f.schema) for f in schema.fields})
    return st.one_of(st.none(), values) if schema.optional else values


@st.composite
def schema_and_value(draw: st.DrawFn) -> tuple[Schema, Any]:
    schema = draw(st.recursive(_leaf_schemas, _extend, max_leaves=8))
    return schema, draw(values_for(schema))


@settings(max_examples=150, deadline=None)
@given(schema_and_value())
def test_round_trip_with_schemas(pair: tuple[Schema, Any]) -> None:
    schema, value = pair
    conv = converter()
    data = conv.from_connect("t", schema, value)
    assert data is not None
    assert converter().to_connect("t", data) == (schema, value)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children,
                                                                      max_size=4),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(_json_values)
def test_round_trip_schemaless(value: Any) -> None:
    for props in ({}, {"schemas.enable": "false"}):
        conv = converter(**props)
        data = conv.from_connect("t", None, value)
        if value is None:
            assert data is None
            continue
        assert conv.to_connect("t", data) == (None, value)


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_is_not_a_decimal(value: bool) -> None:
    """A bool is an int to Python; as a Decimal it must be a DataError, not InvalidOperation."""
    from connect_worker.converters.json_values import to_json_value

    schema = Schema(SchemaType.BYTES, name=DECIMAL, parameters={"scale": "2"})
    with pytest.raises(DataError, match="bool"):
        to_json_value(schema, value)
