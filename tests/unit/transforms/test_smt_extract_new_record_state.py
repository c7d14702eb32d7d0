"""Debezium's ExtractNewRecordState."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, INT64, OPTIONAL_STRING, STRING, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.extract_new_record_state import ExtractNewRecordState

SOURCE = {
    "version": "2.7",
    "connector": "postgresql",
    "ts_ms": 111,
    "table": "customers",
    "lsn": 99,
}
ROW = {"id": 1, "name": "ann"}
CREATE = rec(
    {"before": None, "after": ROW, "source": SOURCE, "op": "c", "ts_ms": 222}, key={"id": 1}
)
UPDATE = rec(
    {"before": ROW, "after": {"id": 1, "name": "bo"}, "source": SOURCE, "op": "u", "ts_ms": 223},
    key={"id": 1},
)
DELETE = rec(
    {"before": {"id": 1, "name": "bo"}, "after": None, "source": SOURCE, "op": "d", "ts_ms": 224},
    key={"id": 1},
)
TOMBSTONE = rec(None, key={"id": 1})
TRUNCATE = rec({"before": None, "after": None, "source": SOURCE, "op": "t", "ts_ms": 225})
HEARTBEAT = rec({"ts_ms": 5}, topic="__debezium-heartbeat")
STREAM = [CREATE, UPDATE, DELETE, TOMBSTONE, TRUNCATE, HEARTBEAT]

UNWRAP = """
transforms=unwrap
transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
"""


def row(value: dict, headers: tuple = ()) -> object:
    return rec(value, key={"id": 1}, headers=headers)


def test_default_mode_keeps_rows_and_tombstones_drops_deletes_and_truncates() -> None:
    check(UNWRAP, STREAM, [row(ROW), row({"id": 1, "name": "bo"}), TOMBSTONE, HEARTBEAT])


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("drop", [row(ROW)]),
        ("tombstone", [row(ROW), TOMBSTONE]),
        (
            "rewrite",
            [row({**ROW, "__deleted": "false"}), row({"id": 1, "name": "bo", "__deleted": "true"})],
        ),
        (
            "rewrite-with-tombstone",
            [
                row({**ROW, "__deleted": "false"}),
                row({"id": 1, "name": "bo", "__deleted": "true"}),
                TOMBSTONE,
            ],
        ),
        ("delete-to-tombstone", [row(ROW), TOMBSTONE]),
    ],
)
def test_delete_tombstone_handling_modes(mode: str, expected: list) -> None:
    check(
        UNWRAP + f"transforms.unwrap.delete.tombstone.handling.mode={mode}",
        [CREATE, DELETE, TOMBSTONE],
        expected,
    )


@pytest.mark.parametrize(
    ("legacy", "mode"),
    [
        ("delete.handling.mode=rewrite", "rewrite"),
        ("delete.handling.mode=rewrite\ndrop.tombstones=false", "rewrite-with-tombstone"),
        ("delete.handling.mode=drop\ndrop.tombstones=false", "tombstone"),
        ("drop.tombstones=true", "drop"),
        ("delete.handling.mode=none", "delete-to-tombstone"),
    ],
)
def test_debeziums_older_options(legacy: str, mode: str) -> None:
    records = [CREATE, DELETE, TOMBSTONE]
    assert run(legacy, records, ExtractNewRecordState) == run(
        f"delete.tombstone.handling.mode={mode}", records, ExtractNewRecordState
    )


def test_add_fields_and_headers() -> None:
    check(
        UNWRAP + "transforms.unwrap.add.fields=op,source.ts_ms,table\n"
        "transforms.unwrap.add.headers=db.lsn,lsn\n"
        "transforms.unwrap.add.headers.prefix=dbz.",
        [CREATE],
        [
            row(
                {**ROW, "__op": "c", "__source_ts_ms": 111, "__table": "customers"},
                headers=(("dbz.db_lsn", None), ("dbz.lsn", 99)),
            )
        ],
    )


def test_with_schema() -> None:
    row_schema = struct(
        ("id", INT32),
        ("name", OPTIONAL_STRING),
        name="dbserver1.public.customers.Value",
        optional=True,
    )
    source_schema = struct(("connector", STRING), ("ts_ms", INT64), ("table", STRING))
    envelope = struct(
        ("before", row_schema),
        ("after", row_schema),
        ("source", source_schema),
        ("op", STRING),
        ("ts_ms", INT64.as_optional()),
        name="dbserver1.public.customers.Envelope",
    )
    unwrapped = struct(
        ("id", INT32),
        ("name", OPTIONAL_STRING),
        ("__deleted", OPTIONAL_STRING),
        ("__op", OPTIONAL_STRING),
        ("__source_ts_ms", INT64.as_optional()),
        name="dbserver1.public.customers.Value",
        optional=True,
    )
    source = {"connector": "postgresql", "ts_ms": 111, "table": "customers"}
    check(
        "delete.tombstone.handling.mode=rewrite\nadd.fields=op,source.ts_ms",
        [
            rec(
                {"before": None, "after": ROW, "source": source, "op": "r", "ts_ms": 1},
                value_schema=envelope,
            ),
            rec(
                {"before": ROW, "after": None, "source": source, "op": "d", "ts_ms": 2},
                value_schema=envelope,
            ),
        ],
        [
            rec(
                {**ROW, "__deleted": "false", "__op": "r", "__source_ts_ms": 111},
                value_schema=unwrapped,
            ),
            rec(
                {**ROW, "__deleted": "true", "__op": "d", "__source_ts_ms": 111},
                value_schema=unwrapped,
            ),
        ],
        cls=ExtractNewRecordState,
    )


def test_an_event_without_a_row_is_a_data_error() -> None:
    broken = rec({"before": None, "after": "oops", "op": "c"})
    with pytest.raises(DataError, match="op 'c' has str in 'after', not a row"):
        run("", [broken], cls=ExtractNewRecordState)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("delete.tombstone.handling.mode=keep", "delete.tombstone.handling.mode: Input should be"),
        ("delete.tombstone.handling.mode=drop\ndrop.tombstones=false", "set only the new option"),
        (
            "delete.handling.mode=rewrite\ndrop.tombstones=maybe",
            "drop.tombstones: Input should be a valid boolean",
        ),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=ExtractNewRecordState)
