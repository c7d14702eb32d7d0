"""Raft state in files: an append-only log with a CRC per entry, quorum-state, snapshots.

Directory layout (one directory per Raft log, e.g. ``__cluster_metadata-0``)::

    quorum-state                                   election state, JSON, replaced atomically
    raft.log                                       the entries, appended
    <20-digit end offset>-<10-digit epoch>.checkpoint   the latest snapshot

``quorum-state`` holds ``{"leaderEpoch", "leaderId", "votedId", "data_version"}``
(Kafka's field names; -1 for none). It is written to a temporary file, fsynced and
renamed over the old one, then the directory is fsynced.

Each ``raft.log`` entry is ``length:u32 crc:u32 offset:i64 epoch:i32 flags:u8
payload`` (big-endian); ``length`` counts the bytes after ``crc``, and the CRC-32C
covers them. Offsets are contiguous and epochs never decrease. On open, the file
is read up to the first entry that is short, fails its CRC or breaks contiguity,
and cut there: a torn tail after a crash is dropped, never half-read.

A snapshot file is ``crc:u32 payload`` (CRC-32C of the payload), written as a
temporary file then renamed; older snapshots are deleted after it. After a
snapshot, ``raft.log`` is rewritten (temporary file, rename) without the entries
below the snapshot. A crash between those two steps is repaired on open.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Iterable
from pathlib import Path

import crc32c

from log_engine.errors import CorruptRaftStateError
from log_engine.invariants import check
from log_engine.replication.raft.log import RaftLog
from log_engine.replication.raft.storage import DurableState
from log_engine.replication.raft.types import ElectionState, Entry, OffsetAndEpoch, Snapshot

QUORUM_STATE_FILE = "quorum-state"
LOG_FILE = "raft.log"
_HEADER = struct.Struct(">II")  # length, crc
_BODY = struct.Struct(">qiB")  # offset, epoch, flags
_FLAG_CONTROL = 0x01
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_NO_ID = -1


def encode_entry(entry: Entry) -> bytes:
    """One entry as ``raft.log`` stores it."""
    body = _BODY.pack(entry.offset, entry.epoch, _FLAG_CONTROL if entry.control else 0)
    body += entry.payload
    return _HEADER.pack(len(body), crc32c.crc32c(body)) + body


def decode_entries(data: bytes) -> tuple[list[Entry], int]:
    """The entries of a ``raft.log`` image and the byte length of its valid prefix."""
    entries: list[Entry] = []
    position = 0
    while position + _HEADER.size <= len(data):
        length, crc = _HEADER.unpack_from(data, position)
        start = position + _HEADER.size
        body = data[start : start + length]
        if length < _BODY.size or len(body) < length or crc32c.crc32c(body) != crc:
            break
        offset, epoch, flags = _BODY.unpack_from(body)
        if entries and (offset != entries[-1].offset + 1 or epoch < entries[-1].epoch):
            break
        entries.append(Entry(offset, epoch, bytes(body[_BODY.size :]), bool(flags & 1)))
        position = start + length
    return entries, position


def snapshot_file_name(snapshot_id: OffsetAndEpoch) -> str:
    """Kafka's snapshot file name for ``snapshot_id``."""
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}.checkpoint"


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    _fsync_directory(path.parent)


class FileRaftStorage:
    """A :class:`~log_engine.replication.raft.storage.RaftStorage` in one directory."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._election = self._read_election_state()
        self._snapshot = self._read_latest_snapshot()
        self._log, self._positions = self._recover_log()
        self._file = open(self.directory / LOG_FILE, "ab")  # noqa: SIM115 - kept open

    # ---- RaftStorage ----------------------------------------------------------

    def load(self) -> DurableState:
        entries = self._log.entries(self._log.start_offset, self._log.end_offset)
        return DurableState(self._election, self._snapshot, tuple(entries))

    def save_election_state(self, state: ElectionState) -> None:
        document = {
            "leaderEpoch": state.epoch,
            "leaderId": _NO_ID if state.leader_id is None else state.leader_id,
            "votedId": _NO_ID if state.voted_for is None else state.voted_for,
            "data_version": 0,
        }
        _write_atomically(self.directory / QUORUM_STATE_FILE, json.dumps(document).encode())
        self._election = state

    def append(self, entries: Iterable[Entry]) -> None:
        position = self._file.tell()
        for entry in entries:
            self._log.append(entry)
            data = encode_entry(entry)
            self._file.write(data)
            self._positions.append(position)
            position += len(data)

    def truncate(self, offset: int) -> None:
        if offset >= self._log.end_offset:
            return
        self._file.flush()
        position = self._positions[offset - self._log.start_offset]
        self._file.truncate(position)
        self._file.seek(position)
        self._log.truncate_from(offset)
        del self._positions[offset - self._log.start_offset :]

    def save_snapshot(self, snapshot: Snapshot) -> None:
        payload = snapshot.payload
        path = self.directory / snapshot_file_name(snapshot.snapshot_id)
        _write_atomically(path, struct.pack(">I", crc32c.crc32c(payload)) + payload)
        for old in self._snapshot_files():
            if old.name != path.name:
                old.unlink()
        self._snapshot = snapshot
        self._log.delete_before(snapshot.snapshot_id)
        self._rewrite_log()

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Sync and close the log file."""
        if not self._file.closed:
            self.sync()
            self._file.close()

    # ---- recovery -------------------------------------------------------------

    def _read_election_state(self) -> ElectionState:
        path = self.directory / QUORUM_STATE_FILE
        if not path.exists():
            return ElectionState(epoch=0)
        try:
            document = json.loads(path.read_bytes())
            epoch, leader, voted = (
                int(document["leaderEpoch"]),
                int(document["leaderId"]),
                int(document["votedId"]),
            )
        except (ValueError, KeyError, TypeError) as error:
            raise CorruptRaftStateError(f"{path}: unreadable quorum state: {error}") from error
        return ElectionState(
            epoch,
            None if voted == _NO_ID else voted,
            None if leader == _NO_ID else leader,
        )

    def _snapshot_files(self) -> list[Path]:
        return sorted(p for p in self.directory.iterdir() if _SNAPSHOT_NAME.match(p.name))

    def _read_latest_snapshot(self) -> Snapshot | None:
        files = self._snapshot_files()
        if not files:
            return None
        path = files[-1]
        match = _SNAPSHOT_NAME.match(path.name)
        check(match is not None, f"{path.name} is not a snapshot name")
        assert match is not None
        data = path.read_bytes()
        if len(data) < 4 or struct.unpack_from(">I", data)[0] != crc32c.crc32c(data[4:]):
            raise CorruptRaftStateError(f"{path}: snapshot fails its CRC")
        return Snapshot(OffsetAndEpoch(int(match[1]), int(match[2])), data[4:])

    def _recover_log(self) -> tuple[RaftLog, list[int]]:
        path = self.directory / LOG_FILE
        data = path.read_bytes() if path.exists() else b""
        entries, valid_bytes = decode_entries(data)
        start = self._snapshot.snapshot_id if self._snapshot else OffsetAndEpoch(0, 0)
        kept = self._entries_above(start, entries)
        log = RaftLog(start, kept)
        if len(kept) != len(entries):
            self._log = log
            self._rewrite_log(opened=False)
            return log, self._positions
        if valid_bytes < len(data):
            with open(path, "r+b") as file:  # drop the torn tail
                file.truncate(valid_bytes)
                os.fsync(file.fileno())
        positions, position = [], 0
        for entry in kept:
            positions.append(position)
            position += len(encode_entry(entry))
        return log, positions

    def _entries_above(self, start: OffsetAndEpoch, entries: list[Entry]) -> list[Entry]:
        """The file's entries from ``start`` on, if they agree with the snapshot there."""
        if not entries:
            return []
        first = entries[0].offset
        if first > start.offset:
            if self._snapshot is None:
                raise CorruptRaftStateError(f"{LOG_FILE} starts at {first}, expected 0")
            return []  # a snapshot installed past the old log; the rewrite did not happen
        if entries[-1].offset < start.offset:
            return []  # everything is below the snapshot
        below = start.offset - 1 - first
        if below >= 0 and entries[below].epoch != start.epoch:
            return []
        return entries[start.offset - first :]

    def _rewrite_log(self, opened: bool = True) -> None:
        if opened:
            self._file.close()
        entries = self._log.entries(self._log.start_offset, self._log.end_offset)
        encoded = [encode_entry(entry) for entry in entries]
        _write_atomically(self.directory / LOG_FILE, b"".join(encoded))
        self._positions, position = [], 0
        for data in encoded:
            self._positions.append(position)
            position += len(data)
        if opened:
            self._file = open(self.directory / LOG_FILE, "ab")  # noqa: SIM115
