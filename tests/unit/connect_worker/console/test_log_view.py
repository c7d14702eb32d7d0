"""How the console shows a record's bytes: text where UTF-8, base64 otherwise, always bounded."""

from __future__ import annotations

import base64

from connect_worker.console.log_view import VALUE_MAX_CHARS, record_json
from log_engine.client import ConsumerRecord


def record(key: bytes | None, value: bytes | None, headers=()) -> ConsumerRecord:  # type: ignore[no-untyped-def]
    return ConsumerRecord("t", 0, 7, 1_700_000_000_000, key, value, tuple(headers))


def test_text_stays_text_and_null_stays_null() -> None:
    shown = record_json(record(None, "é value".encode(), [("__connect.errors.stage", b"TASK_PUT")]))
    assert shown["key"] is None
    assert shown["value"] == {"text": "é value", "truncated": False}
    assert shown["headers"] == [
        {"key": "__connect.errors.stage", "value": {"text": "TASK_PUT", "truncated": False}}
    ]
    assert (shown["partition"], shown["offset"]) == (0, 7)


def test_binary_is_base64_and_long_values_are_cut() -> None:
    binary = bytes(range(256)) * 40
    shown = record_json(record(b"\xff\x00", binary))
    assert shown["key"] == {"base64": base64.b64encode(b"\xff\x00").decode(), "truncated": False}
    assert shown["value"]["truncated"] is True
    assert len(shown["value"]["base64"]) <= VALUE_MAX_CHARS
    long_text = record(None, b"x" * (VALUE_MAX_CHARS + 10))
    assert record_json(long_text)["value"] == {"text": "x" * VALUE_MAX_CHARS, "truncated": True}
