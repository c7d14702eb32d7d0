"""JsonConverter (schemas.enable=true) alone: microseconds per record, both ways.

Two record shapes, each a few thousand distinct records:

- ``jdbc``: a JdbcSource row (bigint, text, numeric(12,2) as Decimal,
  timestamptz as Timestamp, boolean);
- ``cdc``: a Debezium-shaped update event (``before``/``after`` structs of
  8 fields with Decimal, Timestamp, Date, a ``source`` struct of 12 fields,
  ``op``, ``ts_ms``).

For each: ``write_us`` (``from_connect``), ``read_us`` (``to_connect``),
the bulk methods (``from_connect_many``/``to_connect_many``, as the runtime's
bulk path calls them) and, measured in the same run, the baseline: the standard
library's ``json.dumps``/``json.loads`` of the same envelope with a JSON-ready
payload (what a plain Python JSON round trip costs, with no schema work).

Prints one JSON line. ``--quick`` runs in a few seconds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from typing import Any

from connect_worker.converters import JsonConverter
from connect_worker.converters.json_schema import schema_to_json
from connect_worker.converters.json_values import DATE, DECIMAL, TIMESTAMP, to_json_value
from connectors.api import Schema, SchemaType, struct

_DECIMAL = Schema(SchemaType.BYTES, name=DECIMAL, version=1, parameters={"scale": "2"})
_TIMESTAMP = Schema(SchemaType.INT64, name=TIMESTAMP, version=1)
_START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)

JDBC_SCHEMA = struct(
    ("id", Schema(SchemaType.INT64)),
    ("customer", Schema(SchemaType.STRING)),
    ("amount", _DECIMAL),
    ("placed_at", _TIMESTAMP),
    ("paid", Schema(SchemaType.BOOLEAN)),
    name="orders",
)

_ROW = struct(
    ("id", Schema(SchemaType.INT64)),
    ("name", Schema(SchemaType.STRING)),
    ("email", Schema(SchemaType.STRING, optional=True)),
    ("amount", _DECIMAL.as_optional()),
    ("created_at", _TIMESTAMP),
    ("active", Schema(SchemaType.BOOLEAN)),
    ("score", Schema(SchemaType.FLOAT64, optional=True)),
    ("birthday", Schema(SchemaType.INT32, optional=True, name=DATE, version=1)),
    name="shop.public.customers.Value",
    optional=True,
)
_SOURCE = struct(
    ("version", Schema(SchemaType.STRING)),
    ("connector", Schema(SchemaType.STRING)),
    ("name", Schema(SchemaType.STRING)),
    ("ts_ms", Schema(SchemaType.INT64)),
    ("snapshot", Schema(SchemaType.STRING, optional=True, name="io.debezium.data.Enum",
                        version=1, parameters={"allowed": "true,last,false,incremental"},
                        default="false")),
    ("db", Schema(SchemaType.STRING)),
    ("sequence", Schema(SchemaType.STRING, optional=True)),
    ("schema", Schema(SchemaType.STRING)),
    ("table", Schema(SchemaType.STRING)),
    ("txId", Schema(SchemaType.INT64, optional=True)),
    ("lsn", Schema(SchemaType.INT64, optional=True)),
    ("xmin", Schema(SchemaType.INT64, optional=True)),
    name="io.debezium.connector.postgresql.Source",
)
CDC_SCHEMA = replace(struct(
    ("before", _ROW),
    ("after", _ROW),
    ("source", _SOURCE),
    ("op", Schema(SchemaType.STRING)),
    ("ts_ms", Schema(SchemaType.INT64, optional=True)),
    name="shop.public.customers.Envelope",
), version=1)


def jdbc_row(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"customer {i % 10000}",
        "amount": Decimal(i % 100000).scaleb(-2),
        "placed_at": _START + dt.timedelta(seconds=i),
        "paid": i % 3 == 0,
    }


def _customer(i: int, version: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"Customer Number {i}",
        "email": f"customer{i}@example.com" if i % 4 else None,
        "amount": Decimal(i * 7 + version).scaleb(-2),
        "created_at": _START + dt.timedelta(seconds=i, milliseconds=version),
        "active": version % 2 == 0,
        "score": i / 7 + version,
        "birthday": dt.date(1980, 1, 1) + dt.timedelta(days=i % 9000),
    }


def cdc_event(i: int) -> dict[str, Any]:
    return {
        "before": _customer(i, 1),
        "after": _customer(i, 2),
        "source": {
            "version": "2.5.0.Final",
            "connector": "postgresql",
            "name": "shop",
            "ts_ms": 1_700_000_000_000 + i,
            "snapshot": "false",
            "db": "shop",
            "sequence": f'["{i * 100}","{i * 100 + 8}"]',
            "schema": "public",
            "table": "customers",
            "txId": 1000 + i,
            "lsn": i * 100 + 8,
            "xmin": None,
        },
        "op": "u",
        "ts_ms": 1_700_000_000_100 + i,
    }


def per_record_us(run: Callable[[], object], count: int, repeat: int) -> float:
    """The best of ``repeat`` timings of ``run`` (``count`` records each), per record."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return round(best / count * 1e6, 2)


def measure(schema: Schema, values: list[Any], repeat: int) -> dict[str, float]:
    writer, reader = JsonConverter(), JsonConverter()
    writer.configure({}, is_key=False)
    reader.configure({}, is_key=False)
    topic, count = "bench", len(values)
    schemas = [schema] * count
    data = [writer.from_connect(topic, schema, value) or b"" for value in values]
    for item, value in zip(data, values, strict=True):
        assert reader.to_connect(topic, item) == (schema, value), "round trip differs"

    envelope_schema = schema_to_json(schema)
    envelopes = [{"schema": envelope_schema, "payload": to_json_value(schema, v)} for v in values]
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

    result = {
        "write_us": per_record_us(
            lambda: [writer.from_connect(topic, schema, v) for v in values], count, repeat),
        "read_us": per_record_us(lambda: [reader.to_connect(topic, d) for d in data],
                                 count, repeat),
        "stdlib_dumps_us": per_record_us(
            lambda: [encoder.encode(e).encode() for e in envelopes], count, repeat),
        "stdlib_loads_us": per_record_us(lambda: [json.loads(d) for d in data], count, repeat),
        "bytes": len(data[0] or b""),
    }
    many_write = getattr(writer, "from_connect_many", None)
    many_read = getattr(reader, "to_connect_many", None)
    if many_write is not None and many_read is not None:
        result["write_many_us"] = per_record_us(lambda: many_write(topic, schemas, values),
                                                count, repeat)
        result["read_many_us"] = per_record_us(lambda: many_read(topic, data), count, repeat)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer records and repeats")
    args = parser.parse_args()
    count, repeat = (2_000, 3) if args.quick else (20_000, 7)
    out = {
        "bench": "converters",
        "records": count,
        "jdbc": measure(JDBC_SCHEMA, [jdbc_row(i) for i in range(count)], repeat),
        "cdc": measure(CDC_SCHEMA, [cdc_event(i) for i in range(count)], repeat),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
