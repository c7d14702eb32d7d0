"""Hypothesis strategies for protocol bodies, derived from the compiled schemas.

A drawn body carries every field of its version plus the defaults of the fields
the version lacks, i.e. exactly what decoding that body must give back (with
records as ``bytes``; see :func:`plain`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from log_engine.protocol.apis import REQUESTS, RESPONSES, Kind
from log_engine.protocol.schema import CompiledStruct
from log_engine.protocol.types import (
    BOOL,
    BYTES,
    COMPACT_BYTES,
    COMPACT_NULLABLE_BYTES,
    COMPACT_NULLABLE_STRING,
    COMPACT_RECORDS,
    COMPACT_STRING,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    UINT16,
    UINT32,
    UUID,
    ArrayOf,
    Codec,
)
from log_engine.protocol.versions import CLIENT_VERSIONS, SUPPORTED_VERSIONS

_PRIMITIVES: dict[Any, st.SearchStrategy[Any]] = {
    INT8: st.integers(-(2**7), 2**7 - 1),
    INT16: st.integers(-(2**15), 2**15 - 1),
    INT32: st.integers(-(2**31), 2**31 - 1),
    INT64: st.integers(-(2**63), 2**63 - 1),
    UINT16: st.integers(0, 2**16 - 1),
    UINT32: st.integers(0, 2**32 - 1),
    BOOL: st.booleans(),
    FLOAT64: st.floats(allow_nan=False),
    UUID: st.uuids(),
    STRING: st.text(max_size=12),
    NULLABLE_STRING: st.none() | st.text(max_size=12),
    BYTES: st.binary(max_size=12),
    NULLABLE_BYTES: st.none() | st.binary(max_size=12),
    RECORDS: st.none() | st.binary(max_size=40),
    COMPACT_STRING: st.text(max_size=12),
    COMPACT_NULLABLE_STRING: st.none() | st.text(max_size=12),
    COMPACT_BYTES: st.binary(max_size=12),
    COMPACT_NULLABLE_BYTES: st.none() | st.binary(max_size=12),
    COMPACT_RECORDS: st.none() | st.binary(max_size=40),
}


def values(codec: Codec) -> st.SearchStrategy[Any]:
    """Values of one compiled type."""
    if isinstance(codec, CompiledStruct):
        return bodies(codec)
    if isinstance(codec, ArrayOf):
        items = st.lists(values(codec.item), max_size=3)
        return st.none() | items if codec.nullable else items
    return _PRIMITIVES[codec]


def bodies(schema: CompiledStruct) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts for ``schema``: drawn present (and tagged) fields, defaults for the absent ones."""
    fields = (*schema.fields, *schema.tagged.values())
    present = st.fixed_dictionaries({name: values(codec) for name, codec, _ in fields})
    return present.map(lambda drawn: {**schema.absent, **drawn})


def plain(value: Any) -> Any:
    """Decoded value with memoryviews (records) turned into bytes, for comparison."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def declared_versions(kind: Kind) -> list[tuple[int, int]]:
    """Every (api key, version) the registry declares for ``kind``."""
    table = REQUESTS if kind == "request" else RESPONSES
    return [
        (int(key), version)
        for key, message in table.items()
        for version in range(message.versions[0], message.versions[1] + 1)
    ]


def supported_versions() -> list[tuple[int, int]]:
    """Every (api key, version) in SUPPORTED_VERSIONS."""
    return [
        (int(key), version)
        for key, (lo, hi) in SUPPORTED_VERSIONS.items()
        for version in range(lo, hi + 1)
    ]


def client_versions() -> list[tuple[int, int]]:
    """Every (api key, version) in CLIENT_VERSIONS."""
    return [
        (int(key), version)
        for key, (lo, hi) in CLIENT_VERSIONS.items()
        for version in range(lo, hi + 1)
    ]


def case_id(case: tuple[int, int]) -> str:
    from log_engine.protocol.versions import ApiKey

    return f"{ApiKey(case[0]).name.lower()}-v{case[1]}"
