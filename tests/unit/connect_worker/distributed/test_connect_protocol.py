"""Kafka Connect's group protocol bytes, checked against layouts written out by hand."""

from __future__ import annotations

import struct

import pytest

from connect_worker.distributed.protocol import (
    CONFIG_MISMATCH,
    ConnectAssignment,
    ConnectProtocol,
    ConnectProtocolError,
    WorkerMetadata,
)
from connect_worker.runtime.status import TaskId


def _str(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def _i16(n: int) -> bytes:
    return struct.pack(">h", n)


def _i32(n: int) -> bytes:
    return struct.pack(">i", n)


def _i64(n: int) -> bytes:
    return struct.pack(">q", n)


URL = "http://w1:8083/"


def test_metadata_v0_is_version_url_offset() -> None:
    data = WorkerMetadata(URL, 42).encode(ConnectProtocol.EAGER)
    assert data == _i16(0) + _str(URL) + _i64(42)
    assert WorkerMetadata.decode(data) == WorkerMetadata(URL, 42)


def test_metadata_v1_and_v2_carry_the_current_assignment_or_null() -> None:
    assert WorkerMetadata(URL, 7).encode(ConnectProtocol.COMPATIBLE) == (
        _i16(1) + _str(URL) + _i64(7) + _i32(-1)
    )
    current = ConnectAssignment(2, 0, "m1", URL, 7, ("c",), (TaskId("c", 0),))
    data = WorkerMetadata(URL, 7, current).encode(ConnectProtocol.SESSIONED)
    allocation = (
        _i16(2) + _i16(0) + _str("m1") + _str(URL) + _i64(7)
        + _i32(1) + _str("c") + _i32(2) + _i32(-1) + _i32(0)
        + _i32(0) + _i32(0)
    )  # fmt: skip
    assert data == _i16(2) + _str(URL) + _i64(7) + _i32(len(allocation)) + allocation
    assert WorkerMetadata.decode(data) == WorkerMetadata(URL, 7, current)


def test_assignment_v1_groups_by_connector_with_the_connector_sentinel() -> None:
    assignment = ConnectAssignment(
        1, 0, "leader-1", URL, 99,
        connectors=("a",), tasks=(TaskId("a", 0), TaskId("b", 3)),
        revoked_connectors=("b",), revoked_tasks=(TaskId("b", 1),), delay_ms=5000,
    )  # fmt: skip
    expected = (
        _i16(1) + _i16(0) + _str("leader-1") + _str(URL) + _i64(99)
        + _i32(2) + _str("a") + _i32(2) + _i32(-1) + _i32(0) + _str("b") + _i32(1) + _i32(3)
        + _i32(1) + _str("b") + _i32(2) + _i32(-1) + _i32(1)
        + _i32(5000)
    )  # fmt: skip
    assert assignment.encode() == expected
    assert ConnectAssignment.decode(expected) == assignment


def test_assignment_v0_has_no_revocations_and_a_v1_reader_tolerates_missing_fields() -> None:
    v0 = ConnectAssignment(0, CONFIG_MISMATCH, "l", URL, 5)
    data = v0.encode()
    assert data == _i16(0) + _i16(1) + _str("l") + _str(URL) + _i64(5) + _i32(0)
    assert ConnectAssignment.decode(data).failed
    # a v1 assignment cut after its assigned work (an older writer): defaults fill the rest
    short = _i16(1) + _i16(0) + _str("l") + _str(URL) + _i64(5) + _i32(-1)
    assert ConnectAssignment.decode(short) == ConnectAssignment(1, 0, "l", URL, 5)


def test_a_later_version_is_read_by_its_known_prefix() -> None:
    data = ConnectAssignment(1, 0, "l", URL, 5).encode()
    future = _i16(3) + data[2:] + b"\x00\x01"  # a v3 appending a field we do not know
    assert ConnectAssignment.decode(future).config_offset == 5


def test_truncated_bytes_fail_clearly() -> None:
    data = ConnectAssignment(1, 0, "l", URL, 5, ("a",)).encode()
    with pytest.raises(ConnectProtocolError, match="truncated"):
        ConnectAssignment.decode(data[:12])
    with pytest.raises(ConnectProtocolError, match="version"):
        WorkerMetadata.decode(_i16(-1))


def test_protocol_setting_names_and_offers() -> None:
    assert ConnectProtocol.from_setting("sessioned") is ConnectProtocol.SESSIONED
    assert ConnectProtocol.from_setting("eager") is ConnectProtocol.EAGER
    assert ConnectProtocol.from_setting("default") is ConnectProtocol.EAGER
    assert [p.protocol_name for p in ConnectProtocol.SESSIONED.offered()] == [
        "sessioned", "compatible", "default",
    ]  # fmt: skip
    assert [p.protocol_name for p in ConnectProtocol.COMPATIBLE.offered()] == [
        "compatible", "default",
    ]  # fmt: skip
    with pytest.raises(ValueError, match=r"connect\.protocol='cooperative'"):
        ConnectProtocol.from_setting("cooperative")
