"""Errors of the Raft core.

Wire-level outcomes are :class:`ErrorCode` values carried in response messages (the
Kafka error codes the adapter will put on the wire). Exceptions are for callers:

::

    RaftError                       (LogEngineError)
    ├── NotLeaderError              append or resign on a node that is not the leader
    ├── InvalidSnapshotError        a snapshot above the committed offset or below the log start
    └── CorruptRaftStateError       (StorageError) a quorum-state or log file that cannot be read

A broken internal invariant raises ``log_engine.invariants.InvariantViolation``.
"""

from __future__ import annotations

from enum import IntEnum

from log_engine.errors import LogEngineError, StorageError


class ErrorCode(IntEnum):
    """Kafka's error codes, as far as the Raft messages use them."""

    NONE = 0
    NOT_LEADER_OR_FOLLOWER = 6
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99


class RaftError(LogEngineError):
    """Base class of the Raft core's operating errors."""


class NotLeaderError(RaftError):
    """The node is not the leader of the current epoch (the caller should find the leader)."""

    error_code = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)


class InvalidSnapshotError(RaftError):
    """A snapshot was asked at an offset the core cannot cover (not committed, or truncated)."""


class CorruptRaftStateError(RaftError, StorageError):
    """A durable Raft file is unreadable or inconsistent beyond a torn tail."""
