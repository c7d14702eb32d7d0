"""Kafka Connect's ``{"schema": ..., "payload": ...}`` envelope, fast both ways.

Writing: per schema object, the envelope's head ``{"schema":<schema JSON>,"payload":``
is computed once, with a compiled encoder (:mod:`.json_encoders`); a record is
``head + payload JSON + "}"``, the payload written by orjson.

Reading: Kafka's JsonConverter (and ours) writes the compact form
``{"schema":S,"payload":P}``. A message in that form is split without parsing
S: ``S`` is what lies between ``{"schema":`` and the first ``,"payload":``.
That is the real split whenever S is one complete JSON value (the parser
reading the envelope stops exactly at its end), so a candidate S is checked by
parsing it once and is then cached by its bytes with the parsed schema and a
compiled decoder (:mod:`.json_decoders`). The message is accepted that way only
if it ends with ``}`` and what lies in between parses as one JSON value P.
Anything else (other key order or spacing, a schema containing ``,"payload":``,
invalid JSON, ...) takes the general path: parse the whole message. Either way
the result and the errors are the reference's (:mod:`.json_values`).

orjson parses only payloads of a known schema, where the compiled decoder's type
checks catch its one lossy habit (an integer literal beyond 64 bits becomes a
float: it fails an integer field's check, and Decimal's NUMERIC form refuses
such floats). Everything else (schemas, the general path, every fallback,
schemaless data) is parsed by the standard library, exactly as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from connect_worker.converters.json_decoders import compile_decoder
from connect_worker.converters.json_encoders import Fallback, compile_encoder
from connect_worker.converters.json_schema import schema_from_json, schema_to_json
from connect_worker.converters.json_values import (
    from_json_value,
    infer_json_value,
    to_json_value,
)
from connectors.api import DataError, Schema

_STDLIB = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True)
_HEAD = b'{"schema":'
_MIDDLE = b',"payload":'
_NULL_END = len(_HEAD) + len(b"null")  # where a null schema ends (no schema object is so short)
_ENVELOPE_HINT = (
    "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may "
    "not contain additional fields. If you are trying to deserialize plain JSON data, "
    "set schemas.enable=false in your converter configuration."
)


@dataclass(frozen=True, slots=True)
class _WriteEntry:
    schema: Schema  # kept alive, so its id is not reused while cached
    head: bytes
    tail: bytes
    encode: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class _ReadEntry:
    head: bytes  # the message's bytes up to the payload
    schema: Schema
    decode: Callable[[Any], Any]


class EnvelopeWriter:
    """Writes values (with their schema) as JsonConverter's bytes; caches per schema."""

    def __init__(self, schemas_enable: bool, cache_size: int) -> None:
        self._enabled = schemas_enable
        self._cache_size = cache_size
        self._entries: dict[int, _WriteEntry] = {}

    def write(self, topic: str, schema: Schema | None, value: Any) -> bytes:
        """The bytes for ``value`` (not both None: the caller writes a tombstone)."""
        if schema is None:
            payload = self._reference(topic, infer_json_value(value))
            return b'{"schema":null,"payload":' + payload + b"}" if self._enabled else payload
        entry = self._entries.get(id(schema))
        if entry is None or entry.schema is not schema:
            entry = self._entry(schema)
        try:
            payload = orjson.dumps(entry.encode(value))
        except (Fallback, DataError, orjson.JSONEncodeError):
            payload = self._reference(topic, to_json_value(schema, value))
        return entry.head + payload + entry.tail

    def _entry(self, schema: Schema) -> _WriteEntry:
        if self._enabled:
            schema_text = _STDLIB.encode(schema_to_json(schema)).encode()
            head, tail = _HEAD + schema_text + _MIDDLE, b"}"
        else:
            head = tail = b""
        entry = _WriteEntry(schema, head, tail, compile_encoder(schema))
        if len(self._entries) >= self._cache_size:
            self._entries.clear()
        if self._cache_size:
            self._entries[id(schema)] = entry
        return entry

    @staticmethod
    def _reference(topic: str, payload: Any) -> bytes:
        try:
            return _STDLIB.encode(payload).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise DataError(f"cannot write JSON for topic {topic}: {exc}") from None


class EnvelopeReader:
    """Reads JsonConverter's bytes back into (schema, value); caches schemas by their bytes."""

    def __init__(self, schemas_enable: bool, cache_size: int) -> None:
        self._enabled = schemas_enable
        self._cache_size = cache_size
        self._by_bytes: dict[bytes, _ReadEntry] = {}
        self._by_repr: dict[str, _ReadEntry] = {}
        self._last: _ReadEntry | None = None

    def read(self, topic: str, data: Any) -> tuple[Schema | None, Any]:
        """The schema and value in ``data`` (not None); DataError for bad bytes."""
        if not self._enabled:
            return None, self._parse(topic, data)
        if type(data) is not bytes:  # bytearray, str, ...: what json.loads takes
            return self._read_general(topic, data)
        entry = self._last
        if entry is None or not data.startswith(entry.head):
            entry = self._compact_entry(data)
        if entry is not None and data.endswith(b"}"):
            payload_bytes = data[len(entry.head) : -1]
            try:
                payload = orjson.loads(payload_bytes)
            except orjson.JSONDecodeError:
                pass
            else:
                self._last = entry
                try:
                    return entry.schema, entry.decode(payload)
                except Exception:  # the reference decides, on a fresh parse
                    value = from_json_value(entry.schema, json.loads(payload_bytes))
                    return entry.schema, value
        return self._read_general(topic, data)

    def _compact_entry(self, data: bytes) -> _ReadEntry | None:
        """The cached entry for a compact envelope's schema bytes, or None."""
        if not data.startswith(_HEAD):
            return None
        end = data.find(_MIDDLE, len(_HEAD))
        if end < 0 or end == _NULL_END:
            return None  # not compact, or schemaless: the standard library parses it all
        key = data[len(_HEAD) : end]
        entry = self._by_bytes.get(key)
        if entry is not None:
            return entry
        try:
            raw = json.loads(key)  # one complete JSON value: then the split is real
            if raw is None:
                return None  # schemaless data: the standard library parses it all
            schema = schema_from_json(raw)
        except (ValueError, DataError):
            return None  # the general path parses it all, and words any error
        entry = self._new_entry(data[: end + len(_MIDDLE)], schema)
        if len(self._by_bytes) >= self._cache_size:
            self._by_bytes.clear()
        if self._cache_size:
            self._by_bytes[key] = entry
        return entry

    @staticmethod
    def _new_entry(head: bytes, schema: Schema) -> _ReadEntry:
        return _ReadEntry(head, schema, compile_decoder(schema))

    def _read_general(self, topic: str, data: Any) -> tuple[Schema | None, Any]:
        parsed = self._parse(topic, data)
        if parsed is None:
            return None, None
        if type(parsed) is not dict or len(parsed) != 2 or not (
            "schema" in parsed and "payload" in parsed
        ):
            raise DataError(f"topic {topic}: {_ENVELOPE_HINT}")
        raw_schema, payload = parsed["schema"], parsed["payload"]
        if raw_schema is None:
            return None, payload
        entry = self._by_repr.get(key := repr(raw_schema))
        if entry is None:
            entry = self._new_entry(b"", schema_from_json(raw_schema))
            if len(self._by_repr) >= self._cache_size:
                self._by_repr.clear()
            if self._cache_size:
                self._by_repr[key] = entry
        try:
            return entry.schema, entry.decode(payload)
        except Exception:  # the reference decides, on a fresh parse
            return entry.schema, from_json_value(entry.schema, json.loads(data)["payload"])

    @staticmethod
    def _parse(topic: str, data: Any) -> Any:
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise DataError(
                f"Converting byte[] to Kafka Connect data failed due to serialization error "
                f"of topic {topic}: not valid JSON ({exc})"
            ) from None
