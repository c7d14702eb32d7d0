"""Change events as Debezium 3.x writes them: envelope and source fields (ts_us, ts_ns, origin),
source.version, and ZonedTimestamp strings padded to the column's declared precision."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import psycopg

from connect_worker.converters.json import JsonConverter
from connectors.api import Schema, SchemaType, SourceRecord
from connectors.postgres_cdc.tables import DEBEZIUM_VERSION
from tests.integration.postgres_cdc.conftest import TaskHarness
from transforms.extract_new_record_state import ExtractNewRecordState

ENVELOPE_FIELDS = ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
SOURCE_FIELDS = [
    "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
    "schema", "table", "txId", "lsn", "xmin", "origin", "origin_lsn",
]
OPTIONAL_SOURCE_FIELDS = {"snapshot", "sequence", "ts_us", "ts_ns", "txId", "lsn", "xmin",
                          "origin", "origin_lsn"}


def _json(record: SourceRecord) -> dict[str, Any]:
    converter = JsonConverter()
    converter.configure({})
    return json.loads(converter.from_connect(record.topic, record.value_schema, record.value))


def _check_times(value: dict[str, Any], after_ns: int) -> None:
    """ts_ms/ts_us/ts_ns of the envelope and of source agree with each other."""
    assert value["ts_ms"] == value["ts_us"] // 1000 and value["ts_us"] == value["ts_ns"] // 1000
    assert value["ts_ns"] <= time.time_ns() and value["ts_ns"] >= after_ns
    source = value["source"]
    assert source["ts_ms"] == source["ts_us"] // 1000
    assert source["ts_ns"] == source["ts_us"] * 1000  # PostgreSQL's clock counts µs
    assert source["ts_us"] <= value["ts_us"]  # the change happened before the event was made
    assert all(type(v) is int for v in (value["ts_us"], value["ts_ns"], source["ts_us"],
                                        source["ts_ns"]))


def test_envelope_and_source_are_debezium_3s_in_snapshot_and_stream(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE items (id int PRIMARY KEY, label text)")
    db.execute("INSERT INTO items VALUES (1, 'one')")
    started_ns = time.time_ns()
    h = harness()
    before_commit_us = time.time_ns() // 1000
    db.execute("INSERT INTO items VALUES (2, 'two')")
    after_commit_us = time.time_ns() // 1000
    read, create = h.poll_until(lambda rs: len(rs) >= 2)[:2]
    assert (read.value["op"], create.value["op"]) == ("r", "c")
    assert DEBEZIUM_VERSION == "3.6.1.Final"

    for record in (read, create):
        envelope = record.value_schema
        assert envelope is not None and envelope.version == 2
        assert [f.name for f in envelope.fields] == ENVELOPE_FIELDS
        assert list(record.value) == ENVELOPE_FIELDS
        for name in ("ts_ms", "ts_us", "ts_ns"):
            assert envelope.field(name).schema == Schema(SchemaType.INT64, optional=True)
        source_schema = envelope.field("source").schema
        assert (source_schema.name, source_schema.version) == (
            "io.debezium.connector.postgresql.Source", 1)
        assert [f.name for f in source_schema.fields] == SOURCE_FIELDS
        assert {f.name for f in source_schema.fields if f.schema.optional} == (
            OPTIONAL_SOURCE_FIELDS)
        for name in ("ts_us", "ts_ns", "origin_lsn"):
            assert source_schema.field(name).schema.type is SchemaType.INT64
        assert source_schema.field("origin").schema.type is SchemaType.STRING
        source = record.value["source"]
        assert list(source) == SOURCE_FIELDS
        assert source["version"] == DEBEZIUM_VERSION
        assert (source["origin"], source["origin_lsn"]) == (None, None)
        _check_times(record.value, started_ns)

    assert read.value["source"]["ts_us"] >= started_ns // 1000  # the snapshot's start
    assert read.value["source"]["sequence"] == f'[null,"{read.value["source"]["lsn"]}"]'
    # while streaming, source time is the commit time, in PostgreSQL's microseconds
    assert before_commit_us <= create.value["source"]["ts_us"] <= after_commit_us

    payload = _json(create)
    assert list(payload["payload"]) == ENVELOPE_FIELDS
    assert list(payload["payload"]["source"]) == SOURCE_FIELDS
    assert payload["payload"]["source"]["ts_ns"] == create.value["source"]["ts_ns"]
    fields = {f["field"]: f for f in payload["schema"]["fields"]}
    assert payload["schema"]["version"] == 2
    assert fields["ts_us"] == {"type": "int64", "optional": True, "field": "ts_us"}
    assert fields["ts_ns"] == {"type": "int64", "optional": True, "field": "ts_ns"}
    source_fields = {f["field"]: f for f in fields["source"]["fields"]}
    assert fields["source"]["version"] == 1
    assert source_fields["ts_us"] == {"type": "int64", "optional": True, "field": "ts_us"}
    assert source_fields["origin"] == {"type": "string", "optional": True, "field": "origin"}


ZONED = """
CREATE TABLE zoned (
    id int PRIMARY KEY,
    tz timestamptz,
    tz3 timestamptz(3),
    tz0 timestamptz(0),
    tz1 timestamptz(1),
    tzs timestamptz[],
    tz3s timestamptz(3)[],
    t timetz,
    required_tz timestamptz NOT NULL DEFAULT now(),
    required_t timetz NOT NULL DEFAULT now()
)
"""
INSERT = ("INSERT INTO zoned (id, tz, tz3, tz0, tz1, tzs, tz3s, t) VALUES "
          "(%s, %s, %s, %s, %s, %s, %s, %s)")
ROWS = [
    (1, "2024-01-01 10:00:15.638720+00", "2024-01-01 10:00:15.5+00", "2024-01-01 10:00:15+00",
     "2024-01-01 10:00:15.5+00", ["2024-01-01 10:00:00+00", "2024-01-01 10:00:15.63872+00"],
     ["2024-01-01 10:00:15.12+00"], "10:00:15.50+02"),
    (2, "2024-01-01 10:00:15.5+00", "2024-01-01 10:00:00+00", "2024-01-01 10:00:14.6+00",
     "2024-01-01 10:00:00+00", None, None, "10:00:00+00"),
    (3, "2024-01-01 12:00:00+02", None, None, None, None, None, None),
    (4, "21016-11-04 06:51:30+00", "2024-01-01 10:00:15.5+00", "2024-01-01 10:00:15+00",
     "2024-01-01 10:00:15.25+00", ["2024-01-01 10:00:00+00"], ["2024-01-01 10:00:00.1+00"],
     "10:00:00.123+00"),
    (5, "4714-12-31 23:59:59.99999 BC", None, None, None, None, None, None),
    (6, "infinity", None, None, None, None, None, None),
]
EXPECTED = {
    1: {"tz": "2024-01-01T10:00:15.638720Z", "tz3": "2024-01-01T10:00:15.500Z",
        "tz0": "2024-01-01T10:00:15Z", "tz1": "2024-01-01T10:00:15.5Z",
        "tzs": ["2024-01-01T10:00:00.000000Z", "2024-01-01T10:00:15.638720Z"],
        "tz3s": ["2024-01-01T10:00:15.120Z"], "t": "08:00:15.5Z"},
    2: {"tz": "2024-01-01T10:00:15.500000Z", "tz3": "2024-01-01T10:00:00.000Z",
        "tz0": "2024-01-01T10:00:15Z", "tz1": "2024-01-01T10:00:00.0Z",
        "tzs": None, "tz3s": None, "t": "10:00:00Z"},
    3: {"tz": "2024-01-01T10:00:00.000000Z"},
    4: {"tz": "+21016-11-04T06:51:30.000000Z",  # Java's ISO years: + past 9999
        "tz3": "2024-01-01T10:00:15.500Z", "tz0": "2024-01-01T10:00:15Z",
        "tz1": "2024-01-01T10:00:15.3Z", "tzs": ["2024-01-01T10:00:00.000000Z"],
        "tz3s": ["2024-01-01T10:00:00.100Z"], "t": "10:00:00.123Z"},
    5: {"tz": "-4713-12-31T23:59:59.999990Z"},  # 4714 BC is year -4713
    6: {"tz": "infinity"},
}


def _zoned_values(record: SourceRecord) -> dict[str, Any]:
    after = record.value["after"]
    expected = EXPECTED[after["id"]]
    return {name: after[name] for name in expected}


def test_zoned_timestamps_are_padded_to_the_declared_precision(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute(ZONED)
    db.execute("SET TimeZone = 'UTC'")
    for row in ROWS[:3]:
        db.execute(INSERT, row)
    h = harness()
    for row in ROWS[3:]:
        db.execute(INSERT, row)
    db.execute("INSERT INTO zoned (id, required_tz, required_t) "
               "VALUES (7, '2024-01-01 10:00:00+00', '10:00:00+00')")
    db.execute("DELETE FROM zoned WHERE id = 7")
    h.poll_until(lambda rs: len(h.changes()) >= 8)
    changes = h.changes()
    assert [r.value["op"] for r in changes] == ["r"] * 3 + ["c"] * 4 + ["d"]
    for record in changes[:-2]:
        assert _zoned_values(record) == EXPECTED[record.value["after"]["id"]], record.value
    created = changes[-2].value["after"]
    assert (created["required_tz"], created["required_t"]) == (
        "2024-01-01T10:00:00.000000Z", "10:00:00Z")
    # REPLICA IDENTITY DEFAULT: a delete's old row has the key only; Debezium fills the
    # NOT NULL zoned columns with the epoch, as its converters' fallback values
    before = changes[-1].value["before"]
    assert (before["required_tz"], before["required_t"]) == ("1970-01-01T00:00:00Z", "00:00:00Z")
    assert before["tz"] is None


def test_extract_new_record_state_reads_the_new_fields(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE items (id int PRIMARY KEY, at timestamptz)")
    db.execute("INSERT INTO items VALUES (1, '2024-01-01 10:00:00+00')")
    h = harness()
    db.execute("INSERT INTO items VALUES (2, '2024-01-01 10:00:15.5+00')")
    db.execute("DELETE FROM items WHERE id = 1")
    h.poll_until(lambda rs: len(h.changes()) >= 3)
    smt = ExtractNewRecordState()
    smt.configure({"add.fields": "op,ts_us,source.ts_ns,source.origin",
                   "delete.tombstone.handling.mode": "rewrite"})
    rows = [smt.apply(record) for record in h.changes()]
    values = [r.value for r in rows if r is not None]
    assert [(v["id"], v["at"], v["__deleted"], v["__op"]) for v in values] == [
        (1, "2024-01-01T10:00:00.000000Z", "false", "r"),
        (2, "2024-01-01T10:00:15.500000Z", "false", "c"),
        (1, None, "true", "d"),
    ]
    for record, value in zip(h.changes(), values, strict=True):
        assert value["__ts_us"] == record.value["ts_us"]
        assert value["__source_ts_ns"] == record.value["source"]["ts_ns"]
        assert value["__source_origin"] is None
    schema = rows[1].value_schema  # type: ignore[union-attr]
    assert schema is not None
    assert schema.field("__ts_us").schema == Schema(SchemaType.INT64, optional=True)
    assert schema.field("__source_ts_ns").schema == Schema(SchemaType.INT64, optional=True)


def test_a_replayed_transaction_names_its_origin(
    db: psycopg.Connection, harness: Callable[..., TaskHarness], pg_database: str
) -> None:
    """source.origin/origin_lsn (Debezium 3.5+): set for a transaction committed under a
    replication origin (as a subscription replays one), null for the next one."""
    db.execute("CREATE TABLE items (id int PRIMARY KEY)")
    h = harness(**{"snapshot.mode": "no_data"})
    origin = f"upstream_{pg_database}"
    db.execute("SELECT pg_replication_origin_create(%s)", (origin,))
    try:
        db.execute("SELECT pg_replication_origin_session_setup(%s)", (origin,))
        with db.transaction():
            db.execute("SELECT pg_replication_origin_xact_setup('0/1234', now())")
            db.execute("INSERT INTO items VALUES (1)")
        db.execute("SELECT pg_replication_origin_session_reset()")
        db.execute("INSERT INTO items VALUES (2)")
        replayed, local = h.poll_until(lambda rs: len(rs) >= 2)[:2]
    finally:
        db.execute("SELECT pg_replication_origin_drop(%s)", (origin,))
    assert replayed.value["after"] == {"id": 1} and local.value["after"] == {"id": 2}
    assert (replayed.value["source"]["origin"], replayed.value["source"]["origin_lsn"]) == (
        origin, 0x1234)
    assert (local.value["source"]["origin"], local.value["source"]["origin_lsn"]) == (None, None)
