"""The Parquet object format (``.snappy.parquet``), on pyarrow (the optional ``parquet`` extra).

Imported only when ``format.class`` is Parquet. Each value must be a struct
(a ``dict``): with a value schema (JsonConverter with ``schemas.enable=true``,
JDBC and CDC sources) the Parquet schema follows it; without one it is
inferred from the value. One object has one schema: a record whose fields do
not fit the object being written starts a new object (as Confluent's sink
rotates on a schema change); a value that is not a struct, or does not fit
its own schema, is a DataError. The whole object is built in memory and
written at rotation (snappy-compressed).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from connectors.api import DataError, Schema, SchemaType, SinkRecord

_PRIMITIVES: dict[SchemaType, pa.DataType] = {
    SchemaType.INT8: pa.int8(),
    SchemaType.INT16: pa.int16(),
    SchemaType.INT32: pa.int32(),
    SchemaType.INT64: pa.int64(),
    SchemaType.FLOAT32: pa.float32(),
    SchemaType.FLOAT64: pa.float64(),
    SchemaType.BOOLEAN: pa.bool_(),
    SchemaType.STRING: pa.string(),
    SchemaType.BYTES: pa.binary(),
}
_LOGICAL: dict[str, pa.DataType] = {
    "org.apache.kafka.connect.data.Timestamp": pa.timestamp("ms"),
    "org.apache.kafka.connect.data.Date": pa.date32(),
    "org.apache.kafka.connect.data.Time": pa.time32("ms"),
}


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type for a Kafka Connect schema."""
    if schema.name in _LOGICAL:
        return _LOGICAL[schema.name]
    if schema.name == "org.apache.kafka.connect.data.Decimal":
        scale = int((schema.parameters or {}).get("scale", "0"))
        return pa.decimal128(38, scale)
    if schema.type in _PRIMITIVES:
        return _PRIMITIVES[schema.type]
    if schema.type is SchemaType.ARRAY:
        assert schema.value_schema is not None, "an array schema has a value schema"
        return pa.list_(arrow_type(schema.value_schema))
    if schema.type is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return pa.map_(arrow_type(schema.key_schema), arrow_type(schema.value_schema))
    return pa.struct(
        [pa.field(f.name, arrow_type(f.schema), nullable=f.schema.optional) for f in schema.fields]
    )


@dataclass(frozen=True, slots=True)
class ParquetRow:
    """One checked value and the Arrow schema it fits."""

    schema: pa.Schema
    row: dict[str, Any]


class ParquetBuffer:
    """The rows of one Parquet object, all of one schema."""

    def __init__(self) -> None:
        self.count = 0
        self.size_bytes = 0
        self._schema: pa.Schema | None = None
        self._rows: list[dict[str, Any]] = []

    def accepts(self, encoded: ParquetRow) -> bool:
        if self._schema is None or encoded.schema.equals(self._schema):
            return True
        if set(encoded.schema.names) != set(self._schema.names):
            return False
        try:
            pa.RecordBatch.from_pylist([encoded.row], schema=self._schema)
        except (pa.ArrowException, TypeError, ValueError):
            return False
        return True

    def add(self, encoded: ParquetRow) -> None:
        if self._schema is None:
            self._schema = encoded.schema
        self._rows.append(encoded.row)
        self.count += 1
        self.size_bytes += 64 + 16 * len(encoded.row)  # a rough size, for logs only

    def extend(self, encoded: Sequence[ParquetRow]) -> None:
        for row in encoded:
            self.add(row)

    def take_ready(self) -> bytes:
        return b""

    def finish(self) -> bytes:
        assert self._schema is not None, "finish() on an empty Parquet object"
        table = pa.Table.from_pylist(self._rows, schema=self._schema)
        out = io.BytesIO()
        pq.write_table(table, out, compression="snappy")
        self._rows.clear()
        return out.getvalue()


class ParquetFormat:
    """Struct values as Parquet rows."""

    name = "parquet"
    extension = "snappy.parquet"

    def encode(self, record: SinkRecord) -> ParquetRow:
        where = f"record {record.topic}-{record.partition}@{record.kafka_offset}"
        value = record.value
        if not isinstance(value, dict):
            raise DataError(
                f"{where}: format.class=parquet needs struct (object) values, got "
                f"{type(value).__name__}; use a JSON value.converter, or format.class=bytearray"
            )
        try:
            if record.value_schema is not None and record.value_schema.type is SchemaType.STRUCT:
                schema = pa.schema(list(arrow_type(record.value_schema)))
                pa.RecordBatch.from_pylist([value], schema=schema)
            else:
                schema = pa.RecordBatch.from_pylist([value]).schema
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise DataError(f"{where}: the value does not fit a Parquet schema: {exc}") from None
        if not schema.names:
            raise DataError(f"{where}: an empty struct cannot be a Parquet row")
        return ParquetRow(schema, value)

    def encode_null(self, record: SinkRecord) -> ParquetRow:
        raise DataError(
            f"record {record.topic}-{record.partition}@{record.kafka_offset}: Parquet cannot "
            "hold a null value; set behavior.on.null.values=ignore to skip tombstones"
        )

    def encode_run(self, records: Sequence[SinkRecord]) -> None:
        return None  # one by one: a record of another schema starts another object

    def new_buffer(self) -> ParquetBuffer:
        return ParquetBuffer()

    def decode(self, data: bytes) -> list[Any]:
        return pq.read_table(io.BytesIO(data)).to_pylist()
