"""What one step of the core asks of its driver: disk writes, messages, events.

The driver's contract for each :class:`Output`, in this order:

1. apply ``persist`` to the storage, in order, and make it durable (fsync);
2. only then send ``messages`` (a vote or a fetch offset is never announced before
   the state behind it is on disk);
3. hand ``events`` to the state machine, in order.

A crash anywhere in between loses at most that step's effects: nothing was sent
that the durable state does not back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from log_engine.replication.raft.messages import RaftMessage
from log_engine.replication.raft.types import (
    ElectionState,
    Entry,
    LeaderAndEpoch,
    OffsetAndEpoch,
    Snapshot,
)


@dataclass(frozen=True, slots=True)
class SaveElectionState:
    """Replace the quorum-state file with ``state`` (atomically)."""

    state: ElectionState


@dataclass(frozen=True, slots=True)
class AppendEntries:
    """Append ``entries`` (contiguous, starting at the log end) to the log."""

    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class TruncateLog:
    """Drop every log entry at ``offset`` and above (a follower's divergent tail)."""

    offset: int


@dataclass(frozen=True, slots=True)
class SaveSnapshot:
    """Store ``snapshot`` and make its end the log start; entries below it may be deleted.

    Entries at and above the snapshot's end are kept only if the log agrees with the
    snapshot's epoch there (a follower installing a leader's snapshot drops the rest).
    """

    snapshot: Snapshot


PersistAction = SaveElectionState | AppendEntries | TruncateLog | SaveSnapshot


@dataclass(frozen=True, slots=True)
class CommitEvent:
    """Entries below ``end_offset`` are committed; ``entries`` are the new data entries.

    Each committed data entry is handed over exactly once per process lifetime, in
    offset order (control entries only move ``end_offset``).
    """

    entries: tuple[Entry, ...]
    end_offset: int


@dataclass(frozen=True, slots=True)
class LoadSnapshotEvent:
    """Replace the state machine's state with ``snapshot`` (commits continue above it)."""

    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class LeaderChangeEvent:
    """The known leader or epoch changed."""

    leader: LeaderAndEpoch


RaftEvent = CommitEvent | LoadSnapshotEvent | LeaderChangeEvent


@dataclass(slots=True)
class Output:
    """Everything one call into the core produced (see the module docstring for the order)."""

    persist: list[PersistAction] = field(default_factory=list)
    messages: list[RaftMessage] = field(default_factory=list)
    events: list[RaftEvent] = field(default_factory=list)

    def extend(self, other: Output) -> None:
        """Append ``other``'s actions, messages and events after this one's."""
        self.persist.extend(other.persist)
        self.messages.extend(other.messages)
        self.events.extend(other.events)

    def snapshot_ids(self) -> list[OffsetAndEpoch]:
        """The ids of snapshots this output saves (handy in tests and logs)."""
        return [a.snapshot.snapshot_id for a in self.persist if isinstance(a, SaveSnapshot)]
