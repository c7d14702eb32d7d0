"""A KRaft-style Raft core (KIP-595, KIP-630) as a pure state machine.

Modules, one concept each:

- ``types``: offsets with epochs, entries, snapshots, election state
- ``messages``: Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot
- errors and ``ErrorCode`` come from ``log_engine.errors`` (re-exported here)
- ``config``: ``RaftConfig`` with the ``controller.quorum.*`` keys
- ``log``: the in-memory log with epoch lookups and fetch validation
- ``actions``: persist actions, events and the ``Output`` of one step
- ``states``: the roles (unattached, follower, candidate, leader, resigned)
- ``leader``: the leader's replica progress and high watermark
- ``node``: ``RaftNode``: the public API, transitions, timers, commits
- ``election``: Vote, BeginQuorumEpoch and EndQuorumEpoch handling
- ``replication``: the Fetch / FetchSnapshot exchange, both sides
- ``storage``: the storage interface, the in-memory one, and replay of actions
- ``file_storage``: the on-disk storage (CRC'd append-only log, atomic quorum-state)
- ``driver``: a synchronous driver applying outputs to storage and a listener
"""

from log_engine.errors import (
    CorruptRaftStateError,
    ErrorCode,
    InvalidSnapshotError,
    NotLeaderError,
    RaftError,
)
from log_engine.replication.raft.actions import (
    AppendEntries,
    CommitEvent,
    LeaderChangeEvent,
    LoadSnapshotEvent,
    Output,
    PersistAction,
    RaftEvent,
    SaveElectionState,
    SaveSnapshot,
    TruncateLog,
)
from log_engine.replication.raft.config import RaftConfig
from log_engine.replication.raft.driver import RaftDriver, RaftListener
from log_engine.replication.raft.file_storage import FileRaftStorage
from log_engine.replication.raft.log import RaftLog
from log_engine.replication.raft.node import RaftNode
from log_engine.replication.raft.states import Role
from log_engine.replication.raft.storage import DurableState, MemoryRaftStorage, RaftStorage
from log_engine.replication.raft.types import (
    ElectionState,
    Entry,
    LeaderAndEpoch,
    NodeId,
    OffsetAndEpoch,
    QuorumStatus,
    ReplicaStatus,
    Snapshot,
)

__all__ = [
    "AppendEntries",
    "CommitEvent",
    "CorruptRaftStateError",
    "DurableState",
    "ElectionState",
    "Entry",
    "ErrorCode",
    "FileRaftStorage",
    "InvalidSnapshotError",
    "LeaderAndEpoch",
    "LeaderChangeEvent",
    "LoadSnapshotEvent",
    "MemoryRaftStorage",
    "NodeId",
    "NotLeaderError",
    "OffsetAndEpoch",
    "Output",
    "PersistAction",
    "QuorumStatus",
    "RaftConfig",
    "RaftDriver",
    "RaftError",
    "RaftEvent",
    "RaftListener",
    "RaftLog",
    "RaftNode",
    "RaftStorage",
    "ReplicaStatus",
    "Role",
    "SaveElectionState",
    "SaveSnapshot",
    "Snapshot",
    "TruncateLog",
]
