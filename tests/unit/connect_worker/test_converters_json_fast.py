"""JsonConverter's fast paths: same bytes' meaning and same values as the reference code.

The reference is :mod:`connect_worker.converters.json_values` (``to_json_value`` /
``from_json_value``) with the standard library's json; the fast paths (compiled
encoders/decoders, schema recognised by its bytes, orjson) must agree with it on
every value, fall back to it for every shape they do not cover, and word errors
the same way.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect_worker.converters import JsonConverter
from connect_worker.converters.json_schema import schema_to_json
from connect_worker.converters.json_values import (
    DATE,
    DECIMAL,
    TIME,
    TIMESTAMP,
    from_json_value,
    to_json_value,
)
from connectors.api import DataError, Field, Schema, SchemaType, struct
from connectors.api.schema import INT32, INT64, OPTIONAL_STRING, STRING

DEC2 = Schema(SchemaType.BYTES, name=DECIMAL, parameters={"scale": "2"}, version=1)
TS = Schema(SchemaType.INT64, name=TIMESTAMP, version=1)
ROW = struct(("id", INT64), ("name", OPTIONAL_STRING), ("amount", DEC2), ("at", TS),
             name="row")


def converter(**props: str) -> JsonConverter:
    conv = JsonConverter()
    conv.configure(props, is_key=False)
    return conv


def reference_bytes(schema: Schema, value: Any) -> bytes:
    """What the reference code writes (the pre-orjson JsonConverter)."""
    envelope = {"schema": schema_to_json(schema), "payload": to_json_value(schema, value)}
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------- differential tests

_leaf = st.sampled_from([
    Schema(SchemaType.INT8), Schema(SchemaType.INT16), INT32, INT64,
    Schema(SchemaType.FLOAT32), Schema(SchemaType.FLOAT64), Schema(SchemaType.BOOLEAN),
    STRING, OPTIONAL_STRING, Schema(SchemaType.BYTES), Schema(SchemaType.INT32, default=5),
    Schema(SchemaType.STRING, optional=True, default="d"), DEC2, DEC2.as_optional(), TS,
    Schema(SchemaType.INT32, name=DATE), Schema(SchemaType.INT32, name=TIME, optional=True),
    Schema(SchemaType.STRING, name="io.debezium.data.Enum", parameters={"allowed": "a,b"}),
])


def _children(inner: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    names = st.lists(st.sampled_from(["a", "b", "payload", "schema", "é"]), min_size=1,
                     max_size=4, unique=True)
    return st.one_of(
        inner.map(lambda c: Schema(SchemaType.ARRAY, value_schema=c)),
        inner.map(lambda c: Schema(SchemaType.MAP, optional=True, key_schema=STRING,
                                   value_schema=c)),
        inner.map(lambda c: Schema(SchemaType.MAP, key_schema=INT32, value_schema=c)),
        st.tuples(names, st.lists(inner, min_size=4, max_size=4), st.booleans()).map(
            lambda t: struct(*zip(t[0], t[1], strict=False), optional=t[2])),
    )


_schemas = st.recursive(_leaf, _children, max_leaves=10)
# Values that fit or not: the fast path must fall back on anything it does not cover.
_anything = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=5)
    | st.binary(max_size=4) | st.decimals(places=2, max_value=10**6, min_value=-(10**6))
    | st.datetimes(timezones=st.just(dt.UTC)) | st.dates() | st.times(),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "payload"]),
                                                        c, max_size=4),
    max_leaves=8,
)


def _fitting(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.name == DECIMAL:
        base: st.SearchStrategy[Any] = st.decimals(places=2, allow_nan=False,
                                                   allow_infinity=False, max_value=10**9,
                                                   min_value=-(10**9))
    elif schema.name == TIMESTAMP:
        base = st.datetimes(timezones=st.just(dt.UTC)).map(
            lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
    elif schema.name == DATE:
        base = st.dates()
    elif schema.name == TIME:
        base = st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    elif schema.type is SchemaType.STRUCT:
        base = st.fixed_dictionaries({f.name: _fitting(f.schema) for f in schema.fields})
    elif schema.type is SchemaType.ARRAY:
        assert schema.value_schema is not None
        base = st.lists(_fitting(schema.value_schema), max_size=3)
    elif schema.type is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        base = st.dictionaries(_fitting(schema.key_schema), _fitting(schema.value_schema),
                               max_size=3)
    else:
        bits = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}.get(schema.type.value, 31)
        simple: dict[SchemaType, st.SearchStrategy[Any]] = {
            SchemaType.FLOAT32: st.floats(width=32, allow_nan=False),
            SchemaType.FLOAT64: st.floats(allow_nan=False),
            SchemaType.BOOLEAN: st.booleans(),
            SchemaType.STRING: st.text(max_size=8),
            SchemaType.BYTES: st.binary(max_size=6),
        }
        base = simple.get(schema.type, st.integers(-(2**bits), 2**bits - 1))
    return st.none() | base if schema.optional or schema.default is not None else base


@st.composite
def _case(draw: st.DrawFn) -> tuple[Schema, Any]:
    schema = draw(_schemas)
    fitting = _fitting(schema)
    return schema, draw(st.one_of(fitting, fitting, fitting, _anything))


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except DataError as exc:
        return ("error", str(exc))


@settings(max_examples=300, deadline=None)
@given(_case())
def test_write_agrees_with_the_reference(case: tuple[Schema, Any]) -> None:
    schema, value = case
    conv = converter()
    expected = _outcome(lambda: json.loads(reference_bytes(schema, value)))
    got = _outcome(lambda: json.loads(conv.from_connect("t", schema, value)))
    # The same JSON, or the same error (NaN != NaN, so compare the JSON text then).
    assert got == expected or json.dumps(got) == json.dumps(expected)


@settings(max_examples=300, deadline=None)
@given(_case())
def test_read_agrees_with_the_reference(case: tuple[Schema, Any]) -> None:
    schema, value = case
    try:
        payload = to_json_value(schema, value)  # as a writer would put it, if it fits
    except DataError:
        payload = value
    try:
        data = json.dumps({"schema": schema_to_json(schema), "payload": payload},
                          separators=(",", ":"), default=str).encode()
    except ValueError:
        return  # a payload that is not JSON at all
    expected = _outcome(lambda: (schema, from_json_value(schema, json.loads(data)["payload"])))
    conv = converter()
    for _ in range(2):  # the second read finds the schema cached by its bytes
        got = _outcome(lambda: conv.to_connect("t", data))
        assert got == expected or repr(got) == repr(expected)


# ------------------------------------------------------------------- reading


def test_reads_every_layout_kafka_allows() -> None:
    value = {"id": 1, "name": None, "amount": Decimal("1.50"), "at": dt.datetime(
        2024, 1, 1, tzinfo=dt.UTC)}
    compact = converter().from_connect("t", ROW, value)
    assert compact is not None and compact.startswith(b'{"schema":{')
    envelope = json.loads(compact)
    reordered_schema = {key: envelope["schema"][key] for key in reversed(envelope["schema"])}
    layouts = [
        compact,
        json.dumps(envelope, indent=2).encode(),
        json.dumps({"payload": envelope["payload"], "schema": envelope["schema"]}).encode(),
        json.dumps({"schema": reordered_schema, "payload": envelope["payload"]},
                   separators=(",", ":")).encode(),
        compact + b"  \n",
        bytearray(compact),
    ]
    conv = converter()
    for data in layouts * 2:
        assert conv.to_connect("t", data) == (ROW, value)


def test_schema_containing_the_payload_marker_is_split_right() -> None:
    # ',"payload":' inside the schema (a parameter's key): the first one is not the split.
    schema = Schema(SchemaType.STRING, parameters={"a": "1", "payload": "x"})
    data = converter().from_connect("t", schema, "v")
    assert data is not None and data.count(b',"payload":') == 2
    conv = converter()
    assert conv.to_connect("t", data) == (schema, "v")
    assert conv.to_connect("t", data) == (schema, "v")


def test_a_known_schema_with_a_bad_tail_is_still_a_clear_error() -> None:
    conv = converter()
    good = conv.from_connect("orders", ROW, {"id": 1, "name": "a", "amount": Decimal(1),
                                             "at": 0})
    assert good is not None
    conv.to_connect("orders", good)  # the schema is now cached by its bytes
    head = good[: good.index(b',"payload":') + len(b',"payload":')]
    with pytest.raises(DataError, match=r"schemas\.enable=false"):
        conv.to_connect("orders", head + b'{"id":1},"extra":1}')
    with pytest.raises(DataError, match="not valid JSON"):
        conv.to_connect("orders", head + b'{"id":1')
    with pytest.raises(DataError, match="not valid JSON"):
        conv.to_connect("orders", head + b'{"id":1}}}')
    with pytest.raises(DataError, match="null value for a required int64"):
        conv.to_connect("orders", head + b'{"id":null,"name":null,"amount":"AA==","at":0}}')


def test_a_bad_field_after_converted_ones_gets_the_reference_error() -> None:
    # The fast path converts amount and at before it meets the bad nested value.
    schema = struct(("amount", DEC2), ("at", TS), ("inner", struct(("n", INT32))))
    data = (
        b'{"schema":' + json.dumps(schema_to_json(schema), separators=(",", ":")).encode()
        + b',"payload":{"amount":"AQ==","at":5,"inner":{"n":"seven"}}}'
    )
    with pytest.raises(DataError, match=r"a str \('seven'\) does not fit a int32 field"):
        converter().to_connect("t", data)
    with pytest.raises(DataError, match="invalid base64"):
        converter().to_connect("t", data.replace(b'"AQ=="', b'"A*Q="'))


def test_reads_debezium_event_as_kafka_writes_it() -> None:
    text = (
        '{"schema":{"type":"struct","fields":[{"type":"struct","fields":['
        '{"type":"int32","optional":false,"field":"id"},'
        '{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal",'
        '"version":1,"parameters":{"scale":"2","connect.decimal.precision":"12"},'
        '"field":"price"}],"optional":true,"name":"db.public.t.Value","field":"after"},'
        '{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,'
        '"parameters":{"allowed":"true,last,false"},"default":"false","field":"snapshot"},'
        '{"type":"string","optional":false,"field":"op"},'
        '{"type":"int64","optional":true,"field":"ts_ms"}],'
        '"optional":false,"name":"db.public.t.Envelope","version":1},'
        '"payload":{"after":{"id":3,"price":"MDk="},"snapshot":null,"op":"c","ts_ms":17}}'
    )
    schema, value = converter().to_connect("t", text.encode())
    assert schema is not None and schema.name == "db.public.t.Envelope"
    assert value == {"after": {"id": 3, "price": Decimal("123.45")}, "snapshot": "false",
                     "op": "c", "ts_ms": 17}


def test_numeric_decimals_and_json_the_stdlib_alone_reads() -> None:
    number = Schema(SchemaType.BYTES, name=DECIMAL, parameters={"scale": "2"})
    envelope = '{"schema":' + json.dumps(schema_to_json(number), separators=(",", ":"))
    conv = converter()
    assert conv.to_connect("t", (envelope + ',"payload":12.5}').encode()) == (
        number, Decimal("12.5"))
    # orjson would read integer literals beyond 64 bits as floats: they must stay exact.
    huge = -(2**63) - 1
    assert conv.to_connect("t", f"{envelope},\"payload\":{huge}}}".encode()) == (
        number, Decimal(huge))
    int64 = '{"schema":{"type":"int64","optional":false},"payload":%d}'
    for _ in range(2):
        _, value = conv.to_connect("t", (int64 % huge).encode())
        assert type(value) is int and value == huge
    with_null_schema = f'{{"schema":null,"payload":[{huge},{2**80}]}}'.encode()
    _, values = conv.to_connect("t", with_null_schema)
    assert values == [huge, 2**80] and {type(v) for v in values} == {int}
    schemaless = converter(**{"schemas.enable": "false"})
    _, value = schemaless.to_connect("t", f'{{"n":{huge}}}'.encode())
    assert type(value["n"]) is int and value == {"n": huge}
    _, nan = schemaless.to_connect("t", b"[NaN]")
    assert math.isnan(nan[0])


# ------------------------------------------------------------------- writing


def test_write_never_modifies_the_callers_value() -> None:
    value = {"at": dt.datetime(2024, 1, 1, tzinfo=dt.UTC), "amount": Decimal("2.00"),
             "name": "x", "id": 9, "extra": "dropped"}
    before = dict(value)
    data = converter().from_connect("t", ROW, value)
    assert value == before
    assert data is not None and json.loads(data)["payload"] == {
        "id": 9, "name": "x", "amount": "AMg=", "at": 1_704_067_200_000}
    assert list(json.loads(data)["payload"]) == ["id", "name", "amount", "at"]


def test_write_edge_values_match_the_reference() -> None:
    double = Schema(SchemaType.FLOAT64)
    conv = converter()
    for schema, value in [(double, 2), (double, float("inf")), (INT64, 2**63 - 1),
                          (DEC2, Decimal("-0.01")), (DEC2, Decimal("1E+3"))]:
        assert conv.from_connect("t", schema, value) == reference_bytes(schema, value)
    with pytest.raises(DataError, match="does not fit in int64"):
        conv.from_connect("t", INT64, 2**63)
    with pytest.raises(DataError, match="more than 2 digits"):
        conv.from_connect("t", ROW, {"id": 1, "name": None, "amount": Decimal("0.001"),
                                     "at": 0})
    with pytest.raises(DataError, match="cannot write JSON"):
        conv.from_connect("t", STRING, "\ud800")


def test_many_matches_one_at_a_time() -> None:
    conv = converter()
    values = [{"id": i, "name": None if i % 2 else f"n{i}", "amount": Decimal(i),
               "at": dt.datetime(2024, 1, 1, 0, 0, i, tzinfo=dt.UTC)} for i in range(5)]
    schemas: list[Schema | None] = [ROW] * 5 + [None, None]
    values += [None, {"free": [1, "x"]}]
    data = conv.from_connect_many("t", schemas, values)
    assert data == [conv.from_connect("t", s, v) for s, v in zip(schemas, values, strict=True)]
    assert data[5] is None
    read_schemas, read_values = conv.to_connect_many("t", data)
    assert read_schemas == schemas and read_values == values
    with pytest.raises(DataError, match="does not fit"):
        conv.from_connect_many("t", [INT32, INT32], [1, "two"])


def test_schema_cache_holds_per_schema_object_and_is_bounded() -> None:
    conv = converter(**{"schemas.cache.size": "2"})
    for index in range(5):
        schema = struct(("f", INT32), name=f"s{index}")
        data = conv.from_connect("t", schema, {"f": index})
        assert conv.to_connect("t", data) == (schema, {"f": index})
    uncached = converter(**{"schemas.cache.size": "0"})
    data = uncached.from_connect("t", ROW, {"id": 1, "name": None, "amount": Decimal(0),
                                            "at": 0})
    assert uncached.to_connect("t", data)[1]["amount"] == Decimal("0.00")


def test_struct_field_order_follows_the_schema() -> None:
    schema = Schema(SchemaType.STRUCT, fields=(Field("b", INT32, 0), Field("a", INT32, 1)))
    data = converter().from_connect("t", schema, {"a": 1, "b": 2})
    assert data is not None and data.endswith(b'"payload":{"b":2,"a":1}}')
