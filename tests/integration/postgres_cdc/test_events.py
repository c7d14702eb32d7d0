"""Change events look like Debezium's: topics, keys, envelopes, source blocks, encodings."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal

import psycopg

from connect_worker.converters.json import JsonConverter
from connectors.api import SchemaType
from connectors.postgres_cdc.source import PostgresCdcConnector
from harness.postgres import PostgresServer
from tests.integration.postgres_cdc.conftest import TaskHarness, cdc_props

ALL_TYPES = """
CREATE TABLE public.everything (
    id int8 PRIMARY KEY,
    small int2 NOT NULL,
    medium int4,
    price numeric(10, 2),
    free numeric,
    label text,
    code varchar(8),
    flag boolean,
    happened timestamp,
    happened_tz timestamptz,
    day date,
    clock time,
    ident uuid,
    doc jsonb,
    raw bytea,
    tags text[],
    counts int4[],
    ratio float8,
    span interval
)
"""
ROW = """
INSERT INTO public.everything VALUES (
    1, 7, 70000, 1234.50, 3.14159, 'hello', 'abc', true,
    '2024-03-01 12:34:56.789', '2024-03-01 12:34:56.5+02', '2024-03-01', '01:02:03.25',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": [1, 2]}', '\\x00ff10',
    '{"a b","c",NULL}', '{1,2,3}', 0.25, '1 day 2 hours'
)
"""
ENVELOPE_FIELDS = ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
SOURCE_FIELDS = [
    "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
    "schema", "table", "txId", "lsn", "xmin", "origin", "origin_lsn",
]


def _field_names(schema: object) -> list[str]:
    return [f.name for f in schema.fields]  # type: ignore[attr-defined]


def test_snapshot_insert_update_delete_truncate_events(
    db: psycopg.Connection, harness: Callable[..., TaskHarness], pg_database: str
) -> None:
    db.execute(ALL_TYPES)
    db.execute(ROW)
    h = harness(**{"skipped.operations": "none"})
    snapshot = h.poll_until(lambda rs: len(rs) >= 1)[0]

    assert snapshot.topic == "srv.public.everything"
    assert snapshot.key == {"id": 1}
    assert snapshot.key_schema is not None
    assert snapshot.key_schema.name == "srv.public.everything.Key"
    envelope = snapshot.value_schema
    assert envelope is not None and envelope.name == "srv.public.everything.Envelope"
    assert _field_names(envelope) == ENVELOPE_FIELDS
    value = snapshot.value
    assert list(value) == ENVELOPE_FIELDS
    assert value["op"] == "r" and value["before"] is None and value["transaction"] is None
    source = value["source"]
    assert list(source) == SOURCE_FIELDS
    assert _field_names(envelope.field("source").schema) == SOURCE_FIELDS
    assert envelope.field("source").schema.name == "io.debezium.connector.postgresql.Source"
    assert source["connector"] == "postgresql" and source["name"] == "srv"
    assert source["db"] == pg_database and source["schema"] == "public"
    assert source["table"] == "everything" and source["snapshot"] == "last"
    assert isinstance(source["lsn"], int) and isinstance(source["txId"], int)

    after = value["after"]
    assert after == {
        "id": 1, "small": 7, "medium": 70000, "price": Decimal("1234.50"),
        "free": {"scale": 5, "value": (314159).to_bytes(3, "big", signed=True)},
        "label": "hello", "code": "abc", "flag": True,
        "happened": 1709296496789000, "happened_tz": "2024-03-01T10:34:56.500000Z",
        "day": 19783, "clock": 3723250000,
        "ident": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "doc": '{"k": [1, 2]}',
        "raw": b"\x00\xff\x10", "tags": ["a b", "c", None], "counts": [1, 2, 3], "ratio": 0.25,
        "span": 93_600_000_000,
    }
    row_schema = envelope.field("after").schema
    assert row_schema.name == "srv.public.everything.Value" and row_schema.optional
    types = {f.name: (f.schema.type, f.schema.name, f.schema.optional) for f in row_schema.fields}
    assert types["id"] == (SchemaType.INT64, None, False)
    assert types["small"] == (SchemaType.INT16, None, False)
    assert types["medium"] == (SchemaType.INT32, None, True)
    assert types["price"] == (SchemaType.BYTES, "org.apache.kafka.connect.data.Decimal", True)
    assert row_schema.field("price").schema.parameters == {
        "scale": "2", "connect.decimal.precision": "10"}
    assert types["free"][1] == "io.debezium.data.VariableScaleDecimal"
    assert types["happened"][:2] == (SchemaType.INT64, "io.debezium.time.MicroTimestamp")
    assert types["happened_tz"][:2] == (SchemaType.STRING, "io.debezium.time.ZonedTimestamp")
    assert types["day"][:2] == (SchemaType.INT32, "io.debezium.time.Date")
    assert types["clock"][:2] == (SchemaType.INT64, "io.debezium.time.MicroTime")
    assert types["ident"][:2] == (SchemaType.STRING, "io.debezium.data.Uuid")
    assert types["doc"][:2] == (SchemaType.STRING, "io.debezium.data.Json")
    assert types["raw"][:2] == (SchemaType.BYTES, None)
    assert types["tags"][0] is SchemaType.ARRAY
    assert row_schema.field("tags").schema.value_schema.type is SchemaType.STRING
    assert row_schema.field("counts").schema.value_schema.type is SchemaType.INT32

    with db.transaction():
        db.execute("INSERT INTO public.everything (id, small, label) VALUES (2, 1, 'two')")
        db.execute("UPDATE public.everything SET label = 'changed' WHERE id = 1")
        db.execute("DELETE FROM public.everything WHERE id = 2")
    db.execute("TRUNCATE public.everything")
    h.poll_until(lambda rs: any(r.value and r.value.get("op") == "t" for r in rs))
    changes = h.records[1:]
    ops = [(r.value["op"] if r.value else None) for r in changes]
    assert ops == ["c", "u", "d", None, "t"]  # the None is the delete's tombstone
    create, update, delete, tombstone, truncate = changes
    assert create.value["after"]["label"] == "two" and create.value["before"] is None
    assert update.value["before"] is None  # REPLICA IDENTITY DEFAULT: no old row on update
    assert update.value["after"]["label"] == "changed" and update.key == {"id": 1}
    assert delete.key == {"id": 2} and delete.value["after"] is None
    before = delete.value["before"]
    assert before["id"] == 2 and before["label"] is None  # DEFAULT: key columns only,
    assert before["small"] == 0  # and a NOT NULL column gets its type's zero, not null
    assert tombstone.key == {"id": 2} and tombstone.value is None
    assert truncate.key is None and truncate.value["before"] is None
    assert truncate.value["after"] is None
    sources = [r.value["source"] for r in (create, update, delete)]
    assert {s["txId"] for s in sources} == {sources[0]["txId"]}  # one transaction
    assert all(s["snapshot"] == "false" for s in sources)
    lsns = [s["lsn"] for s in sources]
    assert lsns == sorted(lsns)
    assert create.source_partition == {"server": "srv"}
    assert set(create.source_offset) >= {"lsn", "txId", "ts_usec", "lsn_commit", "lsn_proc"}


def test_truncate_is_skipped_by_default_as_in_debezium(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness(**{"snapshot.mode": "no_data"})
    db.execute("INSERT INTO t VALUES (1)")
    db.execute("TRUNCATE t")
    db.execute("INSERT INTO t VALUES (2)")
    h.poll_until(lambda rs: len(rs) >= 2)
    assert [r.value["op"] for r in h.records] == ["c", "c"]


def test_replica_identity_full_unchanged_toast_and_key_change(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE docs (id int PRIMARY KEY, body text, note text)")
    db.execute("CREATE TABLE full_rows (id int PRIMARY KEY, v text)")
    db.execute("ALTER TABLE full_rows REPLICA IDENTITY FULL")
    big = "".join(str(i) for i in range(40000))  # compressed + TOASTed out of line
    db.execute("ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL")
    db.execute("INSERT INTO docs VALUES (1, %s, 'n')", (big,))
    db.execute("INSERT INTO full_rows VALUES (1, 'old')")
    h = harness(**{"snapshot.mode": "no_data"})
    db.execute("UPDATE docs SET note = 'changed' WHERE id = 1")
    db.execute("UPDATE full_rows SET v = 'new' WHERE id = 1")
    db.execute("DELETE FROM full_rows WHERE id = 1")
    db.execute("UPDATE docs SET id = 2 WHERE id = 1")
    h.poll_until(lambda rs: len(h.changes()) >= 5)
    toast, full_update, full_delete, key_delete, key_create = h.changes()
    assert toast.value["after"]["body"] == "__debezium_unavailable_value"
    assert toast.value["after"]["note"] == "changed"
    assert full_update.value["before"] == {"id": 1, "v": "old"}
    assert full_update.value["after"] == {"id": 1, "v": "new"}
    assert full_delete.value["before"] == {"id": 1, "v": "new"}
    assert (key_delete.value["op"], key_delete.key) == ("d", {"id": 1})
    assert (key_create.value["op"], key_create.key) == ("c", {"id": 2})
    tombstones = [r for r in h.records if r.value is None]
    assert [r.key for r in tombstones] == [{"id": 1}, {"id": 1}]


def test_schema_changes_mid_stream_reach_the_next_events(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE evolving (id int PRIMARY KEY, a text)")
    h = harness(**{"snapshot.mode": "no_data"})
    db.execute("INSERT INTO evolving VALUES (1, 'x')")
    db.execute("ALTER TABLE evolving ADD COLUMN b int4 NOT NULL DEFAULT 5")
    db.execute("INSERT INTO evolving VALUES (2, 'y', 6)")
    db.execute("ALTER TABLE evolving DROP COLUMN a")
    db.execute("INSERT INTO evolving VALUES (3, 7)")
    h.poll_until(lambda rs: len(rs) >= 3)
    first, second, third = h.records
    assert first.value["after"] == {"id": 1, "a": "x"}
    assert second.value["after"] == {"id": 2, "a": "y", "b": 6}
    assert third.value["after"] == {"id": 3, "b": 7}
    assert _field_names(third.value_schema.field("after").schema) == ["id", "b"]
    b_schema = second.value_schema.field("after").schema.field("b").schema
    assert b_schema.type is SchemaType.INT32 and not b_schema.optional


def test_include_list_and_decimal_modes(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE wanted (id int PRIMARY KEY, amount numeric(6,3))")
    db.execute("CREATE TABLE wanted_not (id int PRIMARY KEY)")
    db.execute("INSERT INTO wanted VALUES (1, 2.5)")
    db.execute("INSERT INTO wanted_not VALUES (1)")
    h = harness(**{"table.include.list": "public.wanted", "decimal.handling.mode": "string"})
    db.execute("INSERT INTO wanted_not VALUES (2)")
    db.execute("INSERT INTO wanted VALUES (2, 1.125)")
    h.poll_until(lambda rs: len(rs) >= 2)
    assert {r.topic for r in h.records} == {"srv.public.wanted"}  # anchored: not wanted_not
    assert [r.value["after"]["amount"] for r in h.records] == ["2.500", "1.125"]
    h2 = TaskHarness(dict(h.props, **{"decimal.handling.mode": "double", "slot.name": "other",
                                      "publication.name": "other_pub"})).start()
    try:
        h2.poll_until(lambda rs: len(rs) >= 2)
        assert sorted(r.value["after"]["amount"] for r in h2.records) == [1.125, 2.5]
    finally:
        h2.stop()


def test_json_converter_output_is_debeziums(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute(ALL_TYPES)
    db.execute(ROW)
    h = harness()
    record = h.poll_until(lambda rs: len(rs) >= 1)[0]
    converter = JsonConverter()
    converter.configure({})
    envelope = json.loads(converter.from_connect(record.topic, record.value_schema, record.value))
    after = envelope["payload"]["after"]
    assert after["price"] == base64.b64encode((123450).to_bytes(3, "big")).decode()
    assert after["raw"] == "AP8Q" and after["happened"] == 1709296496789000
    assert after["free"] == {"scale": 5, "value": base64.b64encode(b"\x04\xcb\x2f").decode()}
    schema = envelope["schema"]
    assert schema["name"] == "srv.public.everything.Envelope" and schema["version"] == 2
    fields = {f["field"]: f for f in schema["fields"]}
    price = {f["field"]: f for f in fields["after"]["fields"]}["price"]
    assert price == {
        "type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "10"},
        "field": "price",
    }
    key_converter = JsonConverter()
    key_converter.configure({}, is_key=True)
    key = json.loads(key_converter.from_connect(record.topic, record.key_schema, record.key))
    assert key == {"schema": {"type": "struct", "optional": False,
                              "name": "srv.public.everything.Key",
                              "fields": [{"type": "int64", "optional": False, "field": "id"}]},
                   "payload": {"id": 1}}


def test_snapshot_and_stream_rows_have_the_same_columns(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE g (id int PRIMARY KEY, a int, doubled int GENERATED ALWAYS AS "
               "(a * 2) STORED)")
    db.execute("INSERT INTO g (id, a) VALUES (1, 1)")
    h = harness()
    db.execute("INSERT INTO g (id, a) VALUES (2, 2)")
    h.poll_until(lambda rs: len(rs) >= 2)
    snapshot, streamed = h.records
    assert snapshot.value["after"] == {"id": 1, "a": 1}  # pgoutput sends no generated columns
    assert streamed.value["after"] == {"id": 2, "a": 2}
    assert snapshot.value_schema == streamed.value_schema


def test_exclude_list_and_no_tombstones(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE kept (id int PRIMARY KEY)")
    db.execute("CREATE TABLE audit_log (id int PRIMARY KEY)")
    h = harness(**{"table.exclude.list": "public\\.audit_.*", "tombstones.on.delete": "false",
                   "snapshot.mode": "no_data"})
    db.execute("INSERT INTO audit_log VALUES (1)")
    db.execute("INSERT INTO kept VALUES (1)")
    db.execute("DELETE FROM kept WHERE id = 1")
    db.execute("INSERT INTO kept VALUES (2)")
    h.poll_until(lambda rs: len(rs) >= 3)
    assert [(r.topic, r.value["op"]) for r in h.records] == [
        ("srv.public.kept", "c"), ("srv.public.kept", "d"), ("srv.public.kept", "c")]


def test_partitions_and_names_that_topics_cannot_hold(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE parted (id int PRIMARY KEY, v int) PARTITION BY RANGE (id)")
    db.execute("CREATE TABLE parted_low PARTITION OF parted FOR VALUES FROM (0) TO (100)")
    db.execute("CREATE TABLE parted_high PARTITION OF parted FOR VALUES FROM (100) TO (200)")
    db.execute('CREATE TABLE "Order Items" (id int PRIMARY KEY)')
    db.execute("INSERT INTO parted VALUES (1, 1), (150, 1)")
    db.execute('INSERT INTO "Order Items" VALUES (1)')
    h = harness()
    db.execute("INSERT INTO parted VALUES (2, 2), (151, 2)")
    db.execute('INSERT INTO "Order Items" VALUES (2)')
    h.poll_until(lambda rs: len(rs) >= 6)
    by_topic: dict[str, list[tuple[str, int]]] = {}
    for r in h.records:
        by_topic.setdefault(r.topic, []).append((r.value["op"], r.key["id"]))
    assert by_topic == {  # each row once: partitions are captured, not their parent
        "srv.public.parted_low": [("r", 1), ("c", 2)],
        "srv.public.parted_high": [("r", 150), ("c", 151)],
        "srv.public.Order_Items": [("r", 1), ("c", 2)],
    }
    items = next(r for r in h.records if r.topic == "srv.public.Order_Items")
    assert items.value["source"]["table"] == "Order Items"
    assert items.value_schema.name == "srv.public.Order_Items.Envelope"


def test_column_exclude_list_leaves_columns_out(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE people (id int PRIMARY KEY, name text, secret text NOT NULL)")
    db.execute("INSERT INTO people VALUES (1, 'a', 'x')")
    h = harness(**{"column.exclude.list": r"public\.people\.(secret|id)"})
    db.execute("INSERT INTO people VALUES (2, 'b', 'y')")
    db.execute("DELETE FROM people WHERE id = 1")
    h.poll_until(lambda rs: len(h.changes()) >= 3)
    snapshot, create, delete = h.changes()
    assert snapshot.value["after"] == {"id": 1, "name": "a"}  # the key column stays
    assert create.value["after"] == {"id": 2, "name": "b"}
    assert delete.value["before"] == {"id": 1, "name": None}
    assert _field_names(create.value_schema.field("after").schema) == ["id", "name"]


def test_schema_include_list_in_snapshot_stream_and_filtered_publication(
    db: psycopg.Connection, harness: Callable[..., TaskHarness], postgres: PostgresServer,
    pg_database: str,
) -> None:
    db.execute("CREATE SCHEMA other")
    for schema in ("public", "other"):
        db.execute(f"CREATE TABLE {schema}.a (id int PRIMARY KEY)")
        db.execute(f"INSERT INTO {schema}.a VALUES (1)")
    db.execute("CREATE TABLE other.b (id int PRIMARY KEY)")
    db.execute("CREATE TABLE public.b (id int PRIMARY KEY)")
    h = harness(**{"schema.include.list": "other"})  # publication FOR ALL TABLES
    db.execute("INSERT INTO public.a VALUES (2)")
    db.execute("INSERT INTO public.b VALUES (2)")
    db.execute("INSERT INTO other.b VALUES (2)")
    db.execute("INSERT INTO other.a VALUES (2)")
    h.poll_until(lambda rs: len(rs) >= 3)
    assert [(r.topic, r.value["op"], r.key) for r in h.records] == [
        ("srv.other.a", "r", {"id": 1}),
        ("srv.other.b", "c", {"id": 2}),
        ("srv.other.a", "c", {"id": 2}),
    ]

    filtered = TaskHarness(dict(h.props, **{
        "slot.name": "filtered", "publication.name": "filtered_pub",
        "publication.autocreate.mode": "filtered", "snapshot.mode": "no_data"})).start()
    try:
        published = db.execute(
            "SELECT schemaname || '.' || tablename FROM pg_publication_tables "
            "WHERE pubname = 'filtered_pub' ORDER BY 1").fetchall()
        assert [row[0] for row in published] == ["other.a", "other.b"]
        db.execute("INSERT INTO public.a VALUES (3)")
        db.execute("INSERT INTO other.b VALUES (3)")
        filtered.poll_until(lambda rs: len(rs) >= 1)
        assert [(r.topic, r.key) for r in filtered.records] == [("srv.other.b", {"id": 3})]
    finally:
        filtered.stop()

    problems = PostgresCdcConnector().check(
        cdc_props(postgres, pg_database, **{"schema.include.list": "other,nope",
                                            "slot.name": "unused"}))
    assert problems == [
        f"schema.include.list: no schema with tables matches 'nope' in database {pg_database!r}"]


def test_connect_time_precision_and_base64_binary_modes(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    db.execute("CREATE TABLE moments (id int PRIMARY KEY, day date, clock time, at timestamp, "
               "at_tz timestamptz, raw bytea)")
    db.execute("INSERT INTO moments VALUES (1, '1969-12-31', '01:02:03.256789', "
               "'1969-12-31 23:59:59.9995', '2024-03-01 12:34:56.5+02', '\\xfbff00')")
    h = harness(**{"time.precision.mode": "connect", "binary.handling.mode": "base64"})
    db.execute("INSERT INTO moments VALUES (2, '2024-03-01', '23:59:59.999999', "
               "'2024-03-01 12:34:56.789999', '2024-03-01 12:34:56+00', '\\xff')")
    snapshot, streamed = h.poll_until(lambda rs: len(rs) >= 2)[:2]
    assert snapshot.value["op"] == "r" and streamed.value["op"] == "c"
    assert snapshot.value_schema == streamed.value_schema
    assert snapshot.value["after"] == {
        "id": 1, "day": dt.date(1969, 12, 31), "clock": dt.time(1, 2, 3, 256000),
        "at": dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC),
        "at_tz": "2024-03-01T10:34:56.500000Z", "raw": "+/8A",
    }
    assert streamed.value["after"] == {
        "id": 2, "day": dt.date(2024, 3, 1), "clock": dt.time(23, 59, 59, 999000),
        "at": dt.datetime(2024, 3, 1, 12, 34, 56, 789000, tzinfo=dt.UTC),
        "at_tz": "2024-03-01T12:34:56.000000Z", "raw": "/w==",
    }
    converter = JsonConverter()
    converter.configure({})
    envelope = json.loads(
        converter.from_connect(streamed.topic, streamed.value_schema, streamed.value)
    )
    after = envelope["payload"]["after"]
    assert after == {"id": 2, "day": 19783, "clock": 86_399_999, "at": 1_709_296_496_789,
                     "at_tz": "2024-03-01T12:34:56.000000Z", "raw": "/w=="}
    fields = {f["field"]: f for f in envelope["schema"]["fields"]}
    columns = {f["field"]: f for f in fields["after"]["fields"]}
    connect = "org.apache.kafka.connect.data."
    assert columns["at"] == {"type": "int64", "optional": True, "name": connect + "Timestamp",
                             "version": 1, "field": "at"}
    assert columns["day"] == {"type": "int32", "optional": True, "name": connect + "Date",
                              "version": 1, "field": "day"}
    assert columns["clock"] == {"type": "int32", "optional": True, "name": connect + "Time",
                                "version": 1, "field": "clock"}
    assert columns["at_tz"]["name"] == "io.debezium.time.ZonedTimestamp"
    assert columns["raw"] == {"type": "string", "optional": True, "field": "raw"}


def test_adaptive_millisecond_types_for_declared_precisions_up_to_three(
    db: psycopg.Connection, harness: Callable[..., TaskHarness]
) -> None:
    """timestamp(3)/time(0) get Debezium's ms types in the snapshot and the stream alike."""
    db.execute("CREATE TABLE ticks (id int PRIMARY KEY, at timestamp(3), clock time(0), "
               "fine timestamp)")
    db.execute("INSERT INTO ticks VALUES (1, '2024-03-01 12:34:56.789', '01:02:03', "
               "'2024-03-01 12:34:56.789123')")
    h = harness()
    db.execute("INSERT INTO ticks VALUES (2, '1970-01-01 00:00:01.5', '23:59:59', "
               "'1970-01-01 00:00:00.000001')")
    snapshot, streamed = h.poll_until(lambda rs: len(rs) >= 2)[:2]
    assert snapshot.value_schema == streamed.value_schema
    after = next(f.schema for f in streamed.value_schema.fields if f.name == "after")
    names = {f.name: (f.schema.type, f.schema.name) for f in after.fields}
    assert names["at"] == (SchemaType.INT64, "io.debezium.time.Timestamp")
    assert names["clock"] == (SchemaType.INT32, "io.debezium.time.Time")
    assert names["fine"] == (SchemaType.INT64, "io.debezium.time.MicroTimestamp")
    assert snapshot.value["after"] == {"id": 1, "at": 1_709_296_496_789, "clock": 3_723_000,
                                       "fine": 1_709_296_496_789_123}
    assert streamed.value["after"] == {"id": 2, "at": 1_500, "clock": 86_399_000, "fine": 1}
