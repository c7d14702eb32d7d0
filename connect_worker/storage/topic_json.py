"""JSON as Kafka Connect writes it in its internal topics.

Kafka Connect serialises internal records with its JsonConverter, schemas
disabled: compact JSON (no spaces), UTF-8, non-ASCII characters as is, fields
in schema order. Keys of the config and status topics are plain UTF-8
strings; keys of the offsets topic are JSON too.
"""

from __future__ import annotations

import json
from typing import Any


def encode(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON (dict order kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode(data: bytes) -> Any:
    """The JSON value of ``data`` (ValueError, incl. UnicodeDecodeError, if it is not JSON)."""
    return json.loads(data.decode("utf-8"))
