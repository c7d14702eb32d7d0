"""pgoutput messages parsed from hand-built bytes (the layouts in the module doc)."""

from __future__ import annotations

import struct

import pytest

from connectors.postgres_cdc.pgoutput import (
    PG_EPOCH_OFFSET_US,
    UNCHANGED_TOAST,
    Begin,
    Commit,
    Delete,
    Insert,
    Origin,
    ProtocolError,
    Relation,
    RelationColumn,
    Truncate,
    TypeInfo,
    Update,
    parse_keepalive,
    parse_message,
    parse_xlog_header,
)


def tuple_data(*columns: object) -> bytes:
    out = struct.pack(">h", len(columns))
    for column in columns:
        if column is None:
            out += b"n"
        elif column is UNCHANGED_TOAST:
            out += b"u"
        else:
            data = str(column).encode()
            out += b"t" + struct.pack(">i", len(data)) + data
    return out


def test_begin_and_commit() -> None:
    begin = parse_message(b"B" + struct.pack(">QqI", 0x1_0000_0010, 1_000_000, 42))
    assert begin == Begin(0x1_0000_0010, 1_000_000 + PG_EPOCH_OFFSET_US, 42)
    commit = parse_message(b"C" + struct.pack(">BQQq", 0, 100, 180, 5))
    assert commit == Commit(100, 180, 5 + PG_EPOCH_OFFSET_US)


def test_relation_and_type() -> None:
    body = struct.pack(">I", 16384) + b"public\0items\0" + b"d" + struct.pack(">h", 2)
    body += b"\x01id\0" + struct.pack(">Ii", 23, -1) + b"\x00note\0" + struct.pack(">Ii", 25, -1)
    assert parse_message(b"R" + body) == Relation(
        16384, "public", "items", "d",
        (RelationColumn("id", 23, -1, True), RelationColumn("note", 25, -1, False)),
    )
    assert parse_message(b"Y" + struct.pack(">I", 99) + b"public\0mood\0") == TypeInfo(
        99, "public", "mood")


def test_insert_update_delete_tuples() -> None:
    rel = struct.pack(">I", 7)
    assert parse_message(b"I" + rel + b"N" + tuple_data("1", None, "é")) == Insert(
        7, ["1", None, "é"])
    plain = parse_message(b"U" + rel + b"N" + tuple_data("1", UNCHANGED_TOAST))
    assert plain == Update(7, None, False, ["1", UNCHANGED_TOAST])
    keyed = parse_message(b"U" + rel + b"K" + tuple_data("1", None) + b"N" + tuple_data("2", "x"))
    assert keyed == Update(7, ["1", None], True, ["2", "x"])
    full = parse_message(b"U" + rel + b"O" + tuple_data("1", "a") + b"N" + tuple_data("1", "b"))
    assert full == Update(7, ["1", "a"], False, ["1", "b"])
    assert parse_message(b"D" + rel + b"K" + tuple_data("1", None)) == Delete(7, ["1", None], True)
    assert parse_message(b"D" + rel + b"O" + tuple_data("1", "a")) == Delete(7, ["1", "a"], False)


def test_truncate_origin_and_bad_messages() -> None:
    truncate = parse_message(b"T" + struct.pack(">iB", 2, 1) + struct.pack(">II", 5, 6))
    assert truncate == Truncate((5, 6), cascade=True, restart_identity=False)
    assert parse_message(b"O" + struct.pack(">Q", 1) + b"origin\0") == Origin(1, "origin")
    assert parse_message(b"M" + struct.pack(">BQ", 1, 5) + b"prefix\0") is None
    with pytest.raises(ProtocolError, match="unknown pgoutput message type 'Z'"):
        parse_message(b"Z")
    with pytest.raises(ProtocolError, match="malformed"):
        parse_message(b"I" + struct.pack(">I", 7) + b"N" + struct.pack(">h", 1) + b"t\0")


def test_copy_data_headers() -> None:
    xlog = b"w" + struct.pack(">QQQ", 10, 20, 30) + b"B"
    assert parse_xlog_header(xlog) == (10, 20, 30)
    assert parse_keepalive(b"k" + struct.pack(">QqB", 99, 1, 1)) == (99, True)
    assert parse_keepalive(b"k" + struct.pack(">QqB", 99, 1, 0)) == (99, False)
