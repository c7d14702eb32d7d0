"""A synchronous driver: runs one node's outputs against a storage and a state machine.

It keeps the order ``actions.py`` prescribes (persist and sync, then hand messages
back to the caller to send, then events to the listener). The simulation uses it
as is; the broker's asyncio adapter will do the same with the sync in an executor
(see docs/raft.md).
"""

from __future__ import annotations

import random
from typing import Protocol

from log_engine.replication.raft.actions import (
    CommitEvent,
    LeaderChangeEvent,
    LoadSnapshotEvent,
    Output,
)
from log_engine.replication.raft.config import RaftConfig
from log_engine.replication.raft.messages import RaftMessage
from log_engine.replication.raft.node import RaftNode
from log_engine.replication.raft.storage import RaftStorage, apply_actions
from log_engine.replication.raft.types import Entry, LeaderAndEpoch, Snapshot


class RaftListener(Protocol):
    """The state machine above the log (the controller, in the broker)."""

    def handle_commit(self, entries: tuple[Entry, ...], end_offset: int) -> None:
        """Apply newly committed data entries; everything below ``end_offset`` is committed."""
        ...

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        """Replace the state with the snapshot's (commits continue above it)."""
        ...

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """The known leader or the epoch changed."""
        ...


class RaftDriver:
    """Owns one :class:`RaftNode`, its storage and its listener; returns messages to send."""

    def __init__(
        self,
        config: RaftConfig,
        storage: RaftStorage,
        listener: RaftListener,
        now_ms: int,
        rng: random.Random,
    ) -> None:
        self.storage = storage
        self.listener = listener
        self.node = RaftNode(config, storage.load(), now_ms, rng)

    def start(self) -> list[RaftMessage]:
        """Start the node (after a restart: from what the storage recovered)."""
        return self.run(self.node.start())

    def tick(self, now_ms: int) -> list[RaftMessage]:
        return self.run(self.node.tick(now_ms))

    def handle(self, message: RaftMessage, now_ms: int) -> list[RaftMessage]:
        return self.run(self.node.handle(message, now_ms))

    def append(self, payloads: list[bytes], now_ms: int) -> tuple[int, list[RaftMessage]]:
        """Append as the leader (raises ``NotLeaderError`` elsewhere)."""
        offset, out = self.node.append(payloads, now_ms)
        return offset, self.run(out)

    def create_snapshot(self, end_offset: int, payload: bytes) -> list[RaftMessage]:
        return self.run(self.node.create_snapshot(end_offset, payload))

    def resign(self, now_ms: int) -> list[RaftMessage]:
        return self.run(self.node.resign(now_ms))

    def run(self, out: Output) -> list[RaftMessage]:
        """Persist, then deliver events; the caller sends the returned messages."""
        apply_actions(self.storage, out.persist)
        for event in out.events:
            if isinstance(event, CommitEvent):
                self.listener.handle_commit(event.entries, event.end_offset)
            elif isinstance(event, LoadSnapshotEvent):
                self.listener.handle_load_snapshot(event.snapshot)
            elif isinstance(event, LeaderChangeEvent):
                self.listener.handle_leader_change(event.leader)
        return out.messages
