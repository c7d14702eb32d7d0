"""Durable Raft state: the storage interface, an in-memory implementation, and replay.

A storage keeps three things: the election state (quorum-state), the log entries,
and the latest snapshot. The core never calls it: it returns persist actions (see
``actions.py``) and the driver applies them with :func:`apply_actions`, then syncs.
``load()`` is what a restarted node starts from; anything applied but not synced may
be lost, and the core is built to be safe when it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from log_engine.replication.raft.actions import (
    AppendEntries,
    PersistAction,
    SaveElectionState,
    SaveSnapshot,
    TruncateLog,
)
from log_engine.replication.raft.log import RaftLog
from log_engine.replication.raft.types import ElectionState, Entry, OffsetAndEpoch, Snapshot


@dataclass(frozen=True, slots=True)
class DurableState:
    """What a node recovers on start: election state, latest snapshot, entries above it."""

    election: ElectionState = field(default_factory=lambda: ElectionState(epoch=0))
    snapshot: Snapshot | None = None
    entries: tuple[Entry, ...] = ()

    def build_log(self) -> RaftLog:
        """The in-memory log these entries and snapshot describe."""
        start = self.snapshot.snapshot_id if self.snapshot else OffsetAndEpoch(0, 0)
        return RaftLog(start, list(self.entries))


class RaftStorage(Protocol):
    """Where a node's election state, log and snapshot live (memory or files)."""

    def load(self) -> DurableState:
        """The durable state as it is now (what a restart would see)."""
        ...

    def save_election_state(self, state: ElectionState) -> None:
        """Replace the election state, atomically."""
        ...

    def append(self, entries: Iterable[Entry]) -> None:
        """Append entries at the log end."""
        ...

    def truncate(self, offset: int) -> None:
        """Drop entries at ``offset`` and above."""
        ...

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store the snapshot and drop the log below it (see ``SaveSnapshot``)."""
        ...

    def sync(self) -> None:
        """Make everything applied so far durable."""
        ...


def apply_actions(storage: RaftStorage, actions: Iterable[PersistAction]) -> None:
    """Apply one step's persist actions in order, then sync once."""
    for action in actions:
        apply_action(storage, action)
    storage.sync()


def apply_action(storage: RaftStorage, action: PersistAction) -> None:
    """Apply one persist action (without syncing)."""
    if isinstance(action, SaveElectionState):
        storage.save_election_state(action.state)
    elif isinstance(action, AppendEntries):
        storage.append(action.entries)
    elif isinstance(action, TruncateLog):
        storage.truncate(action.offset)
    elif isinstance(action, SaveSnapshot):
        storage.save_snapshot(action.snapshot)
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"unknown persist action {action!r}")


class MemoryRaftStorage:
    """A storage in memory: every applied action counts as durable (tests, simulation)."""

    def __init__(self) -> None:
        self._election = ElectionState(epoch=0)
        self._snapshot: Snapshot | None = None
        self._log = RaftLog()

    def load(self) -> DurableState:
        return DurableState(
            self._election,
            self._snapshot,
            tuple(self._log.entries(self._log.start_offset, self._log.end_offset)),
        )

    def save_election_state(self, state: ElectionState) -> None:
        self._election = state

    def append(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            self._log.append(entry)

    def truncate(self, offset: int) -> None:
        self._log.truncate_from(offset)

    def save_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._log.delete_before(snapshot.snapshot_id)

    def sync(self) -> None:
        return None
