"""Kafka Connect's group protocol bytes: worker metadata and assignments.

Connect workers join their group with protocol type ``connect``. Which
sub-protocols a worker offers depends on ``connect.protocol``, preferred first:

========== =========================================== ===================
setting    offered (JoinGroup protocols)                rebalancing
========== =========================================== ===================
default    ``default`` (v0)                             eager
compatible ``compatible`` (v1), ``default`` (v0)        incremental (KIP-415)
sessioned  ``sessioned`` (v2), ``compatible``, ``default`` incremental, signed
                                                       internal requests
========== =========================================== ===================

The coordinator picks the protocol every member offers, so one older worker
downgrades the whole group. Everything is classic Kafka encoding: big-endian,
int16 string lengths, int32 array counts and byte lengths (-1 for null)::

    Metadata v0       version int16 (0), url string, config_offset int64
    Metadata v1/v2    version int16 (1|2), url string, config_offset int64,
                      allocation nullable bytes (the worker's current
                      assignment, encoded as below, null before its first)
    Assignment v0     version int16 (0), error int16, leader string,
                      leader_url string, config_offset int64,
                      assignment [connector string, tasks [int32]]
    Assignment v1/v2  as v0 (version 1|2), then revoked [connector string,
                      tasks [int32]] (nullable), delay int32

In ``tasks`` the sentinel -1 stands for the connector instance itself. In a
v1/v2 assignment ``assignment`` holds only what is newly assigned: the worker
keeps what it had, minus ``revoked``. Readers tolerate missing trailing v1
fields and unknown higher versions (read by their v1 prefix), as Kafka's do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from connect_worker.runtime.status import TaskId
from log_engine.client.classic_fields import (
    INT16,
    INT32,
    INT64,
    ClassicReader,
    write_int32_array,
    write_string,
)

CONNECTOR_TASK = -1
"""The task number standing for the connector instance in assignment bytes."""

NO_ERROR = 0
CONFIG_MISMATCH = 1
"""The leader could not catch up with the newest config offset a member reported:
every member reads its config topic to the assignment's offset and rejoins."""



class ConnectProtocolError(ValueError):
    """Connect metadata or assignment bytes that do not parse."""


class ConnectProtocol(Enum):
    """The ``connect.protocol`` choices, with their JoinGroup name and version."""

    EAGER = ("default", 0)
    COMPATIBLE = ("compatible", 1)
    SESSIONED = ("sessioned", 2)

    def __init__(self, protocol_name: str, version: int) -> None:
        self.protocol_name = protocol_name
        self.version = version

    @property
    def cooperative(self) -> bool:
        """Incremental cooperative rebalancing (KIP-415): v1 and later."""
        return self.version >= 1

    @staticmethod
    def from_setting(value: str) -> ConnectProtocol:
        """The value of ``connect.protocol`` (``eager`` is accepted for ``default``)."""
        wanted = value.strip().lower()
        for protocol in ConnectProtocol:
            if wanted in (protocol.protocol_name, protocol.name.lower()):
                return protocol
        names = ", ".join(p.protocol_name for p in ConnectProtocol)
        raise ValueError(f"connect.protocol={value!r} is not one of {names}")

    @staticmethod
    def from_name(protocol_name: str) -> ConnectProtocol:
        """The sub-protocol the coordinator selected, by its JoinGroup name."""
        for protocol in ConnectProtocol:
            if protocol.protocol_name == protocol_name:
                return protocol
        raise ConnectProtocolError(f"unknown connect sub-protocol {protocol_name!r}")

    def offered(self) -> list[ConnectProtocol]:
        """What a worker with this setting offers, preferred first."""
        return sorted((p for p in ConnectProtocol if p.version <= self.version),
                      key=lambda p: -p.version)


@dataclass(frozen=True, slots=True)
class ConnectAssignment:
    """What the leader hands one worker (Kafka's ``ExtendedAssignment``)."""

    version: int
    error: int
    leader: str
    leader_url: str
    config_offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[TaskId, ...] = ()
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[TaskId, ...] = ()
    delay_ms: int = 0

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR

    def encode(self) -> bytes:
        out = bytearray(INT16.pack(self.version))
        out += INT16.pack(self.error)
        write_string(self.leader, out)
        write_string(self.leader_url, out)
        out += INT64.pack(self.config_offset)
        _write_connector_tasks(self.connectors, self.tasks, out)
        if self.version >= 1:
            _write_connector_tasks(self.revoked_connectors, self.revoked_tasks, out)
            out += INT32.pack(self.delay_ms)
        return bytes(out)

    @staticmethod
    def decode(data: bytes) -> ConnectAssignment:
        reader = _Reader(data)
        version = reader.version()
        error = reader.int16()
        leader = reader.string()
        leader_url = reader.string()
        config_offset = reader.int64()
        connectors, tasks = reader.connector_tasks()
        revoked_connectors: tuple[str, ...] = ()
        revoked_tasks: tuple[TaskId, ...] = ()
        delay_ms = 0
        if version >= 1 and not reader.at_end():
            revoked_connectors, revoked_tasks = reader.connector_tasks()
            if not reader.at_end():
                delay_ms = reader.int32()
        return ConnectAssignment(
            version, error, leader, leader_url, config_offset,
            connectors, tasks, revoked_connectors, revoked_tasks, delay_ms,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class WorkerMetadata:
    """What a worker offers in JoinGroup: its REST url, config offset, current assignment."""

    url: str
    config_offset: int
    assignment: ConnectAssignment | None = field(default=None)

    def encode(self, protocol: ConnectProtocol) -> bytes:
        out = bytearray(INT16.pack(protocol.version))
        write_string(self.url, out)
        out += INT64.pack(self.config_offset)
        if protocol.cooperative:
            if self.assignment is None:
                out += INT32.pack(-1)
            else:
                allocation = _with_version(self.assignment, protocol.version).encode()
                out += INT32.pack(len(allocation))
                out += allocation
        return bytes(out)

    @staticmethod
    def decode(data: bytes) -> WorkerMetadata:
        reader = _Reader(data)
        version = reader.version()
        url = reader.string()
        config_offset = reader.int64()
        assignment = None
        if version >= 1 and not reader.at_end():
            allocation = reader.nullable_bytes()
            if allocation is not None:
                assignment = ConnectAssignment.decode(allocation)
        return WorkerMetadata(url, config_offset, assignment)


def _with_version(assignment: ConnectAssignment, version: int) -> ConnectAssignment:
    if assignment.version == version:
        return assignment
    return ConnectAssignment(
        version, assignment.error, assignment.leader, assignment.leader_url,
        assignment.config_offset, assignment.connectors, assignment.tasks,
        assignment.revoked_connectors, assignment.revoked_tasks, assignment.delay_ms,
    )  # fmt: skip


def _write_connector_tasks(
    connectors: Iterable[str], tasks: Iterable[TaskId], out: bytearray
) -> None:
    by_connector: dict[str, list[int]] = {}
    for name in connectors:
        by_connector.setdefault(name, []).append(CONNECTOR_TASK)
    for task in tasks:
        by_connector.setdefault(task.connector, []).append(task.task)
    out += INT32.pack(len(by_connector))
    for name, numbers in by_connector.items():
        write_string(name, out)
        write_int32_array(numbers, out)


class _Reader(ClassicReader):
    """Connect protocol fields, failing with :class:`ConnectProtocolError`."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data, ConnectProtocolError, "connect protocol")

    def version(self) -> int:
        version = self.int16()
        if version < 0:
            raise ConnectProtocolError(f"unsupported connect protocol version {version}")
        return version

    def connector_tasks(self) -> tuple[tuple[str, ...], tuple[TaskId, ...]]:
        connectors: list[str] = []
        tasks: list[TaskId] = []
        for _ in range(max(self.int32(), 0)):  # a null array reads as empty
            name = self.string()
            for _ in range(max(self.int32(), 0)):
                number = self.int32()
                if number == CONNECTOR_TASK:
                    connectors.append(name)
                else:
                    tasks.append(TaskId(name, number))
        return tuple(connectors), tuple(tasks)
