"""The records a plugin produces (SourceRecord) and receives (SinkRecord).

Both are immutable; transforms make changed copies with :meth:`ConnectRecord.replace`.
Keys and values are Python data (see :mod:`connectors.api.schema`), turned into
bytes by the worker's converters, never by the plugin. Header values are Python
data too (``str``, ``bytes``, numbers, ...); headers keep order and may repeat.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Self

from connectors.api.schema import Schema

Header = tuple[str, Any]


class TimestampType(StrEnum):
    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectRecord:
    """What source and sink records share; the unit transforms work on."""

    topic: str
    partition: int | None = None
    key: Any = None
    value: Any = None
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None  # ms since the epoch

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` applied (records are immutable)."""
        return replace(self, **changes)

    def header(self, name: str) -> Any:
        """The last value of header ``name``, or None."""
        found = None
        for key, value in self.headers:
            if key == name:
                found = value
        return found


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceRecord(ConnectRecord):
    """A record read from a source system, with where it came from.

    ``source_partition`` names a stream in the source (``{"filename": ...}``,
    ``{"table": ...}``) and ``source_offset`` the position just after this
    record in it (``{"position": 1234}``). The runtime stores the offset once
    the log has acknowledged the record, and hands it back through
    :class:`~connectors.api.source.OffsetReader` after a restart. Both must be
    JSON-serialisable dicts.
    """

    source_partition: dict[str, Any] | None = None
    source_offset: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SinkRecord(ConnectRecord):
    """A record read from the log for a sink: its topic, partition and offset."""

    kafka_offset: int = -1
    timestamp_type: TimestampType = TimestampType.CREATE_TIME


def _fast_init(cls: type) -> None:
    """Give ``cls`` an ``__init__`` that fills its slots through their descriptors.

    The ``__init__`` :mod:`dataclasses` writes for a frozen class sets each field
    with ``object.__setattr__`` (about 2 us for ten fields, paid for every record
    a source reads and every record a sink receives); a slot descriptor's
    ``__set__`` does the same store in under half that. Same keyword-only
    signature and defaults; instances stay immutable (``setattr`` still raises).
    """
    fields = dataclasses.fields(cls)
    namespace: dict[str, Any] = {}
    params, body = [], []
    for field in fields:  # dataclass field names are identifiers: safe to splice
        assert field.default_factory is dataclasses.MISSING, "no default factories here"
        namespace["set_" + field.name] = getattr(cls, field.name).__set__
        if field.default is dataclasses.MISSING:
            params.append(field.name)
        else:
            namespace["default_" + field.name] = field.default
            params.append(f"{field.name}=default_{field.name}")
        body.append(f"    set_{field.name}(self, {field.name})")
    source = f"def __init__(self, *, {', '.join(params)}) -> None:\n" + "\n".join(body)
    exec(source, namespace)  # the source holds field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", init)  # noqa: B010 - replacing the generated one


for _record_class in (ConnectRecord, SourceRecord, SinkRecord):
    _fast_init(_record_class)


def columns_builder(
    cls: type, columns: Sequence[str], constants: Sequence[str]
) -> Callable[..., list[Any]]:
    """``build(*constants, *columns)``: one ``cls`` record per row of the column iterables.

    ``cls(**fields)`` costs a call with keyword parsing per record; the loop this
    writes stores each field through its slot descriptor (as :func:`_fast_init`'s
    ``__init__`` does) with no call per record, about half the cost. Fields named
    in neither list get their defaults. For whoever builds records in batches:
    :func:`source_records` here, the runtime's sink conversion.
    """
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls, "zip": zip}
    stores = []
    for field in dataclasses.fields(cls):  # dataclass field names: safe to splice
        namespace["set_" + field.name] = getattr(cls, field.name).__set__
        if field.name in columns or field.name in constants:
            stores.append(f"        set_{field.name}(record, {field.name})\n")
        else:
            namespace["default_" + field.name] = field.default
            stores.append(f"        set_{field.name}(record, default_{field.name})\n")
    iterables = [f"{name}_column" for name in columns]
    source = (
        f"def build({', '.join([*constants, *iterables])}):\n"
        "    out = []\n"
        "    append = out.append\n"
        f"    for {', '.join(columns)}, in zip({', '.join(iterables)}):\n"
        "        record = new(cls)\n"
        f"{''.join(stores)}"
        "        append(record)\n"
        "    return out\n"
    )
    exec(source, namespace)
    build: Callable[..., list[Any]] = namespace["build"]
    return build


_build_source_records = columns_builder(
    SourceRecord, ("key", "value"), ("topic", "key_schema", "value_schema", "source_partition")
)


def source_records(
    topic: str,
    values: Iterable[Any],
    *,
    value_schema: Schema | None = None,
    source_partition: dict[str, Any] | None = None,
    keys: Iterable[Any] | None = None,
    key_schema: Schema | None = None,
) -> list[SourceRecord]:
    """One SourceRecord per value (and key), all with the same topic, schemas and partition.

    For sources that read rows in batches: the same records as calling
    ``SourceRecord(...)`` per value, with no constructor call each (about half
    the cost). Every record has no offset; set the batch's last one with
    ``replace(source_offset=...)`` (the runtime stores the newest acknowledged).
    """
    return _build_source_records(
        topic, key_schema, value_schema, source_partition,
        itertools.repeat(None) if keys is None else keys, values,
    )


@dataclass(frozen=True, slots=True)
class TopicPartition:
    """A topic partition as the sink API names it."""

    topic: str
    partition: int
