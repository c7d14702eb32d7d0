"""Durable Raft state: the memory and file storages agree, and files survive crashes."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from log_engine.replication.raft import (
    CorruptRaftStateError,
    ElectionState,
    Entry,
    FileRaftStorage,
    MemoryRaftStorage,
    OffsetAndEpoch,
    RaftStorage,
    Snapshot,
)
from log_engine.replication.raft.file_storage import LOG_FILE, QUORUM_STATE_FILE
from tests.unit.replication.raft.helpers import entries


@pytest.fixture(params=["memory", "file"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> RaftStorage:
    if request.param == "memory":
        return MemoryRaftStorage()
    return FileRaftStorage(tmp_path / "__cluster_metadata-0")


def test_an_empty_storage_starts_at_epoch_zero(storage: RaftStorage) -> None:
    state = storage.load()
    assert state.election == ElectionState(0) and state.snapshot is None and state.entries == ()


def test_storage_keeps_election_state_entries_truncation_and_snapshot(
    storage: RaftStorage,
) -> None:
    storage.save_election_state(ElectionState(3, voted_for=2, leader_id=2))
    storage.append(entries([1, 1, 2, 3, 3]))
    storage.truncate(4)
    storage.save_snapshot(Snapshot(OffsetAndEpoch(2, 1), b"image"))
    storage.sync()
    state = storage.load()
    assert state.election == ElectionState(3, voted_for=2, leader_id=2)
    assert state.snapshot == Snapshot(OffsetAndEpoch(2, 1), b"image")
    assert state.entries == tuple(entries([1, 1, 2, 3])[2:])


def reopen(storage: FileRaftStorage) -> FileRaftStorage:
    storage.close()
    return FileRaftStorage(storage.directory)


def test_a_restart_reads_back_what_was_synced(tmp_path: Path) -> None:
    storage = FileRaftStorage(tmp_path)
    storage.save_election_state(ElectionState(7, voted_for=None, leader_id=1))
    storage.append([*entries([1, 4]), Entry(2, 7, b"", control=True)])
    storage.sync()
    before = storage.load()
    assert reopen(storage).load() == before
    document = json.loads((tmp_path / QUORUM_STATE_FILE).read_text())
    assert document == {"leaderEpoch": 7, "leaderId": 1, "votedId": -1, "data_version": 0}


@pytest.mark.parametrize("cut_bytes", [1, 5, 13])
def test_a_torn_tail_is_cut_at_the_last_whole_entry(tmp_path: Path, cut_bytes: int) -> None:
    storage = FileRaftStorage(tmp_path)
    storage.append(entries([1, 1, 1]))
    storage.close()
    path = tmp_path / LOG_FILE
    size = path.stat().st_size
    os.truncate(path, size - cut_bytes)
    recovered = FileRaftStorage(tmp_path)
    assert recovered.load().entries == tuple(entries([1, 1]))
    recovered.append(entries([2], start=2))  # appending after the cut works
    assert reopen(recovered).load().entries == tuple(entries([1, 1, 2]))


def test_a_corrupt_entry_ends_the_log_there(tmp_path: Path) -> None:
    storage = FileRaftStorage(tmp_path)
    storage.append(entries([1, 1, 1]))
    storage.close()
    path = tmp_path / LOG_FILE
    data = bytearray(path.read_bytes())
    second = len(data) // 3
    data[second + 20] ^= 0xFF  # a payload byte of the second entry
    path.write_bytes(bytes(data))
    assert FileRaftStorage(tmp_path).load().entries == tuple(entries([1]))


def test_a_leftover_temporary_quorum_state_is_ignored(tmp_path: Path) -> None:
    storage = FileRaftStorage(tmp_path)
    storage.save_election_state(ElectionState(2, voted_for=3))
    storage.close()
    (tmp_path / (QUORUM_STATE_FILE + ".tmp")).write_text("{half")  # crash mid-write
    assert FileRaftStorage(tmp_path).load().election == ElectionState(2, voted_for=3)


def test_an_unreadable_quorum_state_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / QUORUM_STATE_FILE).write_text('{"leaderEpoch": "x"}')
    with pytest.raises(CorruptRaftStateError, match="quorum-state"):
        FileRaftStorage(tmp_path)


def test_a_snapshot_replaces_older_ones_and_a_crash_before_the_log_rewrite_is_repaired(
    tmp_path: Path,
) -> None:
    storage = FileRaftStorage(tmp_path)
    storage.append(entries([1, 1, 1, 2]))
    storage.save_snapshot(Snapshot(OffsetAndEpoch(1, 1), b"one"))
    storage.save_snapshot(Snapshot(OffsetAndEpoch(3, 1), b"three"))
    storage.close()
    snapshots = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".checkpoint")
    assert snapshots == ["00000000000000000003-0000000001.checkpoint"]
    # A follower installed a leader's snapshot at (6, 5) and died before rewriting its log.
    leader_snapshot = tmp_path / "00000000000000000006-0000000005.checkpoint"
    leader_snapshot.write_bytes(struct.pack(">I", crc32c.crc32c(b"leader")) + b"leader")
    recovered = FileRaftStorage(tmp_path)
    state = recovered.load()
    assert state.snapshot == Snapshot(OffsetAndEpoch(6, 5), b"leader")
    assert state.entries == ()
    recovered.append([Entry(6, 5, b"next")])
    assert reopen(recovered).load().entries == (Entry(6, 5, b"next"),)


def test_a_snapshot_failing_its_crc_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "00000000000000000004-0000000001.checkpoint").write_bytes(b"\0\0\0\0junk")
    with pytest.raises(CorruptRaftStateError, match="CRC"):
        FileRaftStorage(tmp_path)


operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 4), st.integers(0, 2)),
        st.tuples(st.just("truncate"), st.integers(0, 30)),
        st.tuples(st.just("snapshot"), st.integers(0, 30)),
        st.tuples(st.just("vote"), st.integers(0, 9)),
        st.tuples(st.just("reopen"),),
    ),
    max_size=25,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations)
def test_file_storage_matches_memory_storage_across_reopens(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple]
) -> None:
    memory = MemoryRaftStorage()
    files = FileRaftStorage(tmp_path_factory.mktemp("raft"))
    epoch = 1
    for op in ops:
        state = memory.load()
        end = (state.snapshot.snapshot_id.offset if state.snapshot else 0) + len(state.entries)
        start = end - len(state.entries)
        if op[0] == "append":
            epoch += op[2]
            new = entries([epoch] * op[1], start=end)
            memory.append(new)
            files.append(new)
        elif op[0] == "truncate" and start <= op[1]:
            memory.truncate(op[1])
            files.truncate(op[1])
        elif op[0] == "snapshot" and start < op[1] <= end:
            at = state.entries[op[1] - 1 - start].epoch
            snapshot = Snapshot(OffsetAndEpoch(op[1], at), f"s{op[1]}".encode())
            memory.save_snapshot(snapshot)
            files.save_snapshot(snapshot)
        elif op[0] == "vote":
            memory.save_election_state(ElectionState(op[1], voted_for=op[1] % 3 or None))
            files.save_election_state(ElectionState(op[1], voted_for=op[1] % 3 or None))
        elif op[0] == "reopen":
            files.sync()
            files = reopen(files)
        assert files.load() == memory.load()
    files.close()


WRITER = """
import sys
from log_engine.replication.raft import ElectionState, Entry, FileRaftStorage
storage = FileRaftStorage(sys.argv[1])
state = storage.load()
offset = len(state.entries)
while True:
    storage.append([Entry(offset, 1, b"x" * (offset % 300))])
    if offset % 50 == 0:
        storage.save_election_state(ElectionState(offset, voted_for=1))
    storage.sync()
    print(offset, flush=True)  # acknowledged: durable
    offset += 1
"""


def test_a_process_killed_mid_write_keeps_every_synced_entry(tmp_path: Path) -> None:
    acknowledged = -1
    for _round in range(3):  # kill, restart on the same files, kill again
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        for _ in range(200 + _round * 50):
            line = writer.stdout.readline()
            assert line, "the writer died on its own"
            acknowledged = int(line)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        state = FileRaftStorage(tmp_path).load()
        assert len(state.entries) > acknowledged
        assert [e.offset for e in state.entries] == list(range(len(state.entries)))
        assert all(e.payload == b"x" * (e.offset % 300) for e in state.entries)
        assert state.election.epoch >= acknowledged - acknowledged % 50
