"""Header converters: header values to bytes and back.

SimpleHeaderConverter (the worker's default, as Kafka's) writes ``bytes`` as
they are, strings as UTF-8, numbers and booleans as their text (``true``,
``42``, ``1.5``) and lists/dicts as compact JSON; None stays None. Reading
infers the type back from the text the way Kafka's does: ``true``/``false``,
integers, decimals, ``[...]``/``{...}`` JSON, ``null``, else the string
itself (so a string header ``"42"`` comes back as the int 42, as in Kafka).
Bytes that are not UTF-8 come back as bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

from connectors.api import DataError, HeaderConverter

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+")
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


class SimpleHeaderConverter(HeaderConverter):
    """Kafka's SimpleHeaderConverter: header values as text, types inferred on read."""

    aliases = ("SimpleHeaderConverter", "org.apache.kafka.connect.storage.SimpleHeaderConverter")

    def from_connect(self, topic: str, name: str, value: Any) -> bytes | None:
        if value is None:
            return None
        kind = type(value)
        if kind is bytes:
            return cast(bytes, value)
        if kind is str:
            return cast(str, value).encode()
        if kind is bool:
            return b"true" if value else b"false"
        if kind in (int, float):
            return repr(value).encode()
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        if isinstance(value, list | tuple | dict):
            try:
                return _ENCODER.encode(value).encode()
            except (TypeError, ValueError) as exc:
                raise DataError(f"header {name!r}: cannot write {kind.__name__}: {exc}") from None
        return str(value).encode()

    def to_connect(self, topic: str, name: str, data: bytes | None) -> Any:
        if data is None:
            return None
        try:
            text = data.decode()
        except UnicodeDecodeError:
            return data
        return _infer(text)


def _infer(text: str) -> Any:
    if text == "true":
        return True
    if text == "false":
        return False
    if text == "null":
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text[:1] in ("[", "{") and text[-1:] in ("]", "}"):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


class StringHeaderConverter(HeaderConverter):
    """Kafka's StringConverter used as ``header.converter``: every header is text."""

    aliases = ("StringConverter", "org.apache.kafka.connect.storage.StringConverter")

    def from_connect(self, topic: str, name: str, value: Any) -> bytes | None:
        if value is None or type(value) is bytes:
            return value
        return (value if type(value) is str else str(value)).encode()

    def to_connect(self, topic: str, name: str, data: bytes | None) -> Any:
        return None if data is None else data.decode(errors="replace")


class ByteArrayHeaderConverter(HeaderConverter):
    """Kafka's ByteArrayConverter used as ``header.converter``: bytes untouched."""

    aliases = ("ByteArrayConverter", "org.apache.kafka.connect.converters.ByteArrayConverter")

    def from_connect(self, topic: str, name: str, value: Any) -> bytes | None:
        if value is None or type(value) is bytes:
            return value
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        raise DataError(f"header {name!r}: ByteArrayConverter takes bytes, not "
                        f"{type(value).__name__}")

    def to_connect(self, topic: str, name: str, data: bytes | None) -> Any:
        return data
