"""Object formats: how records become an object's bytes, and how an object's bytes become values.

A format has two halves, so the sink's ``put`` can refuse a bad batch before
changing anything:

- ``encode(record)`` is stateless: it checks one record and returns what the
  file will hold for it (a line of bytes, a Parquet row), or raises DataError;
- a :class:`FileBuffer` collects encoded records of one object; it may refuse
  an encoded record (``accepts``) when the object cannot hold it (a Parquet
  file has one schema), and the writer then rotates to a new object.

JSON lines (``.json``): each value as one line of JSON, as Confluent's
JsonFormat writes it (values are what the converter produced: dicts, lists,
strings, numbers; ``bytes`` are refused, use ``bytearray``).
ByteArray (``.bin``): each value's bytes followed by the separator (a newline
by default); reading splits at the separator, so binary values holding it do
not restore one to one. Parquet: see :mod:`connectors.s3.parquet`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import operator
from collections.abc import Sequence
from typing import Any, Protocol

from connectors.api import DataError, SinkRecord

NULL_JSON = b"null"
_VALUE = operator.attrgetter("value")


class FileBuffer(Protocol):
    """The records of one object being built, in order."""

    count: int
    size_bytes: int

    def accepts(self, encoded: Any) -> bool: ...

    def add(self, encoded: Any) -> None: ...

    def extend(self, encoded: Sequence[Any]) -> None:
        """``add`` each of ``encoded``, in order."""
        ...

    def take_ready(self) -> bytes:
        """Bytes already final (streamed to S3 before the object is complete)."""
        ...

    def finish(self) -> bytes:
        """The rest of the object's bytes."""
        ...


class ObjectFormat(Protocol):
    """One object format: encoding for the sink, decoding for the source."""

    name: str
    extension: str

    def encode(self, record: SinkRecord) -> Any: ...

    def encode_null(self, record: SinkRecord) -> Any: ...

    def encode_run(self, records: Sequence[SinkRecord]) -> list[Any] | None:
        """``encode`` of each record, or None when the run holds a null value or the format
        wants its records one by one (a buffer of it may refuse one: Parquet)."""
        ...

    def new_buffer(self) -> FileBuffer: ...

    def decode(self, data: bytes) -> list[Any]: ...


class StreamBuffer:
    """Records as bytes, each followed by a separator (JSON lines, bytes).

    Values are kept as given and joined with the separator once, at the end:
    no copy per record.
    """

    def __init__(self, separator: bytes) -> None:
        self.count = 0
        self.size_bytes = 0
        self._separator = separator
        self._chunks: list[bytes] = []

    def accepts(self, encoded: Any) -> bool:
        return True

    def add(self, encoded: bytes) -> None:
        self._chunks.append(encoded)
        self.count += 1
        self.size_bytes += len(encoded) + len(self._separator)

    def extend(self, encoded: Sequence[bytes]) -> None:
        self._chunks.extend(encoded)
        self.count += len(encoded)
        self.size_bytes += sum(map(len, encoded)) + len(encoded) * len(self._separator)

    def take_ready(self) -> bytes:
        if not self._chunks:
            return b""
        self._chunks.append(b"")  # a separator after the last record too
        data = self._separator.join(self._chunks)
        self._chunks.clear()
        return data

    def finish(self) -> bytes:
        return self.take_ready()


def _json_default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class JsonFormat:
    """JSON lines, one value per line (``.json``)."""

    name = "json"
    extension = "json"

    def encode(self, record: SinkRecord) -> bytes:
        value = record.value
        if isinstance(value, bytes | bytearray | memoryview):
            raise DataError(
                f"{_where(record)}: the value is raw bytes, which format.class=json cannot write "
                "(use a JSON or String value.converter, or format.class=bytearray)"
            )
        try:
            text = json.dumps(value, default=_json_default, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            problem = f"{_where(record)}: the value is not JSON serialisable: {exc}"
            raise DataError(problem) from None
        return text.encode("utf-8", errors="surrogateescape")

    def encode_null(self, record: SinkRecord) -> bytes:
        return NULL_JSON

    def encode_run(self, records: Sequence[SinkRecord]) -> list[bytes] | None:
        if any(record.value is None for record in records):
            return None
        return [self.encode(record) for record in records]

    def new_buffer(self) -> FileBuffer:
        return StreamBuffer(b"\n")

    def decode(self, data: bytes) -> list[Any]:
        return [json.loads(line) for line in data.splitlines() if line.strip()]


class ByteArrayFormat:
    """Raw value bytes, each followed by a separator (``.bin``)."""

    name = "bytearray"
    extension = "bin"

    def __init__(self, separator: bytes = b"\n") -> None:
        self.separator = separator

    def encode(self, record: SinkRecord) -> bytes:
        value = record.value
        if type(value) is bytes:
            return value
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        if isinstance(value, str):
            return value.encode("utf-8", errors="surrogateescape")
        raise DataError(
            f"{_where(record)}: format.class=bytearray needs bytes or text values, got "
            f"{type(value).__name__} (use value.converter=ByteArrayConverter)"
        )

    def encode_null(self, record: SinkRecord) -> bytes:
        return b""

    def encode_run(self, records: Sequence[SinkRecord]) -> list[bytes] | None:
        values = list(map(_VALUE, records))
        if set(map(type, values)) == {bytes}:  # what ByteArrayConverter gives: taken as is
            return values
        if None in values:
            return None
        return [self.encode(record) for record in records]

    def new_buffer(self) -> FileBuffer:
        return StreamBuffer(self.separator)

    def decode(self, data: bytes) -> list[Any]:
        if not data:
            return []
        parts = data.split(self.separator) if self.separator else [data]
        if parts and parts[-1] == b"":
            parts.pop()
        return parts


def _where(record: SinkRecord) -> str:
    return f"record {record.topic}-{record.partition}@{record.kafka_offset}"


def make_format(name: str, *, bytearray_separator: bytes = b"\n") -> ObjectFormat:
    """The format called ``name`` (a short name from :mod:`connectors.s3.config`)."""
    if name == "json":
        return JsonFormat()
    if name == "bytearray":
        return ByteArrayFormat(bytearray_separator)
    if name == "parquet":
        from connectors.s3.parquet import ParquetFormat  # pyarrow only when chosen

        return ParquetFormat()
    raise ValueError(f"unknown format {name!r}")
