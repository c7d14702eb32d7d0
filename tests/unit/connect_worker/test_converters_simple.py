"""StringConverter, ByteArrayConverter and the header converters."""

from __future__ import annotations

from typing import Any

import pytest

from connect_worker.converters import (
    ByteArrayConverter,
    ByteArrayHeaderConverter,
    SimpleHeaderConverter,
    StringConverter,
    StringHeaderConverter,
)
from connectors.api import ConfigError, DataError, Schema, SchemaType
from connectors.api.schema import INT32, STRING


def test_string_converter_round_trip_and_encoding() -> None:
    conv = StringConverter()
    conv.configure({}, is_key=False)
    assert conv.from_connect("t", STRING, "é") == "é".encode()
    assert conv.from_connect("t", None, None) is None
    assert conv.from_connect("t", INT32, 42) == b"42"
    assert conv.from_connect("t", None, b"raw") == b"raw"
    schema, value = conv.to_connect("t", "é".encode())
    assert value == "é" and schema == Schema(SchemaType.STRING, optional=True)
    assert conv.to_connect("t", None)[1] is None

    latin = StringConverter()
    latin.configure({"converter.encoding": "ISO-8859-1"}, is_key=True)
    assert latin.from_connect("t", None, "é") == b"\xe9"
    assert latin.to_connect("t", b"\xe9")[1] == "é"


def test_string_converter_errors() -> None:
    with pytest.raises(ConfigError, match=r"converter\.encoding"):
        StringConverter().configure({"converter.encoding": "klingon"}, is_key=False)
    with pytest.raises(DataError, match="not utf-8"):
        StringConverter().to_connect("t", b"\xff")


def test_byte_array_converter() -> None:
    conv = ByteArrayConverter()
    assert conv.from_connect("t", None, b"\x00\x01") == b"\x00\x01"
    assert conv.from_connect("t", None, bytearray(b"ab")) == b"ab"
    assert conv.from_connect("t", None, None) is None
    assert conv.to_connect("t", b"x") == (Schema(SchemaType.BYTES, optional=True), b"x")
    with pytest.raises(DataError, match="takes bytes"):
        conv.from_connect("t", None, "text")
    with pytest.raises(DataError, match="bytes schema"):
        conv.from_connect("t", STRING, b"x")


@pytest.mark.parametrize(
    ("value", "data"),
    [
        ("text", b"text"),
        (b"\x00\xff", b"\x00\xff"),
        (42, b"42"),
        (-7, b"-7"),
        (1.5, b"1.5"),
        (True, b"true"),
        (False, b"false"),
        ([1, "a"], b'[1,"a"]'),
        ({"k": [1, 2]}, b'{"k":[1,2]}'),
        (None, None),
    ],
)
def test_simple_header_converter_round_trip(value: Any, data: bytes | None) -> None:
    conv = SimpleHeaderConverter()
    assert conv.from_connect("t", "h", value) == data
    assert conv.to_connect("t", "h", data) == value


def test_simple_header_converter_infers_like_kafka() -> None:
    conv = SimpleHeaderConverter()
    assert conv.to_connect("t", "h", b"123") == 123
    assert conv.to_connect("t", "h", b"1e3") == 1000.0
    assert conv.to_connect("t", "h", b"[not json") == "[not json"
    assert conv.to_connect("t", "h", b"") == ""
    assert conv.to_connect("t", "h", b"null") is None


def test_string_and_bytes_header_converters() -> None:
    assert StringHeaderConverter().from_connect("t", "h", 5) == b"5"
    assert StringHeaderConverter().to_connect("t", "h", b"5") == "5"
    assert ByteArrayHeaderConverter().to_connect("t", "h", b"5") == b"5"
    with pytest.raises(DataError):
        ByteArrayHeaderConverter().from_connect("t", "h", 5)
