"""Deprecated (issue 16): the Raft core's errors and ``ErrorCode`` are in ``log_engine.errors``."""

from log_engine.errors import CorruptRaftStateError as CorruptRaftStateError
from log_engine.errors import ErrorCode as ErrorCode
from log_engine.errors import InvalidSnapshotError as InvalidSnapshotError
from log_engine.errors import NotLeaderError as NotLeaderError
from log_engine.errors import RaftError as RaftError
