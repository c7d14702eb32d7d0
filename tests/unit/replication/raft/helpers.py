"""Small builders for driving Raft nodes by hand in unit tests."""

from __future__ import annotations

import random
from collections.abc import Iterable

from log_engine.errors import ErrorCode
from log_engine.replication.raft import (
    DurableState,
    ElectionState,
    Entry,
    MemoryRaftStorage,
    Output,
    RaftConfig,
    RaftNode,
    Snapshot,
)
from log_engine.replication.raft.messages import VoteResponse
from log_engine.replication.raft.storage import apply_actions

ELECTION_TIMEOUT_MS = 100
FETCH_TIMEOUT_MS = 400


def config(node_id: int, voters: Iterable[int] = (1, 2, 3), **overrides: int) -> RaftConfig:
    """A config with short, round timeouts."""
    settings: dict[str, int] = {
        "election_timeout_ms": ELECTION_TIMEOUT_MS,
        "election_backoff_max_ms": 50,
        "fetch_timeout_ms": FETCH_TIMEOUT_MS,
        "request_timeout_ms": 200,
        "fetch_max_wait_ms": 100,
    }
    settings.update(overrides)
    return RaftConfig(node_id=node_id, voter_ids=frozenset(voters), **settings)  # type: ignore[arg-type]


def entries(epochs: list[int], start: int = 0) -> list[Entry]:
    """Entries with the given epochs from offset ``start``; payloads name offset and epoch."""
    return [Entry(start + i, e, f"{start + i}@{e}".encode()) for i, e in enumerate(epochs)]


class Harness:
    """One node with a memory storage that applies every output (as a driver would)."""

    def __init__(
        self,
        node_id: int,
        voters: Iterable[int] = (1, 2, 3),
        log_epochs: list[int] | None = None,
        election: ElectionState | None = None,
        snapshot: Snapshot | None = None,
        now_ms: int = 0,
        **overrides: int,
    ) -> None:
        self.config = config(node_id, voters, **overrides)
        start = snapshot.snapshot_id.offset if snapshot else 0
        durable = DurableState(
            election or ElectionState(max(log_epochs or [0])),
            snapshot,
            tuple(entries(log_epochs or [], start)),
        )
        self.storage = MemoryRaftStorage()
        self.storage.save_election_state(durable.election)
        if snapshot:
            self.storage.save_snapshot(snapshot)
        self.storage.append(durable.entries)
        self.now_ms = now_ms
        self.node = RaftNode(self.config, self.storage.load(), now_ms, random.Random(node_id))
        self.outputs: list[Output] = []
        self.apply(self.node.start())

    def apply(self, out: Output) -> Output:
        apply_actions(self.storage, out.persist)
        self.outputs.append(out)
        return out

    def tick(self, advance_ms: int) -> Output:
        self.now_ms += advance_ms
        return self.apply(self.node.tick(self.now_ms))

    def handle(self, message: object) -> Output:
        return self.apply(self.node.handle(message, self.now_ms))  # type: ignore[arg-type]

    def restart(self) -> None:
        """A new process from what the storage holds."""
        self.node = RaftNode(self.config, self.storage.load(), self.now_ms, random.Random(7))
        self.apply(self.node.start())

    def stand(self, *voters: int) -> Output:
        """Time out and gather pre-votes from ``voters``: the node is then a candidate."""
        out = self.tick(3 * ELECTION_TIMEOUT_MS)
        epoch = self.node.epoch
        for voter in voters:
            out = self.handle(
                VoteResponse(voter, self.node.node_id, ErrorCode.NONE, epoch, None, True, True)
            )
        return out

    def elect(self, *voters: int) -> Output:
        """Stand for election and collect pre-votes, then votes, from ``voters``."""
        out = self.stand(*voters)
        epoch = self.node.epoch
        for voter in voters:
            out = self.handle(
                VoteResponse(voter, self.node.node_id, ErrorCode.NONE, epoch, None, True)
            )
        return out
