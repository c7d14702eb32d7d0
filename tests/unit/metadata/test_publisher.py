"""The listener's updates, and the replica states a broker's replica manager is given."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.metadata.publisher import ReplicaStatePublisher
from log_engine.metadata.records import (
    Endpoint,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    encode_record,
)
from log_engine.metadata.snapshot import encode_snapshot
from log_engine.metadata.types import BrokerInfo, PartitionState
from log_engine.replication.raft.types import Entry, LeaderAndEpoch, OffsetAndEpoch, Snapshot

A, B = uuid.UUID(int=1), uuid.UUID(int=2)


class ReplicaManager:
    def __init__(self) -> None:
        self.applied: list[list[PartitionState]] = []
        self.brokers: Mapping[int, BrokerInfo] = {}

    def apply(self, states: Iterable[PartitionState], brokers: Mapping[int, BrokerInfo]) -> None:
        self.applied.append(list(states))
        self.brokers = brokers


class Log:
    def __init__(self, listener: MetadataListener) -> None:
        self.listener = listener
        self.offset = 0

    def commit(self, *records: MetadataRecord) -> None:
        entries = tuple(
            Entry(self.offset + i, 1, encode_record(r)) for i, r in enumerate(records)
        )
        self.offset += len(entries)
        self.listener.handle_commit(entries, self.offset)


def brokers() -> list[MetadataRecord]:
    return [
        RegisterBrokerRecord(b, uuid.UUID(int=b), b, (Endpoint("PLAINTEXT", "h", 9000 + b),))
        for b in (1, 2, 3)
    ]


def test_broker_gets_only_its_replicas_changes_and_removals() -> None:
    listener = MetadataListener()
    manager = ReplicaManager()
    removed: list[list[PartitionState]] = []
    ReplicaStatePublisher(2, manager, removed.append).attach(listener)
    log = Log(listener)
    log.commit(
        *brokers(),
        TopicRecord("a", A),
        PartitionRecord(A, 0, (1, 2), (1, 2), 1),
        PartitionRecord(A, 1, (1, 3), (1, 3), 1),
    )
    assert [(s.topic, s.partition) for s in manager.applied[-1]] == [("a", 0)]
    assert sorted(manager.brokers) == [1, 2, 3]
    log.commit(PartitionChangeRecord(A, 1, isr=(1,)))  # not a replica of it: nothing
    assert len(manager.applied) == 1
    log.commit(PartitionChangeRecord(A, 0, leader=2))
    (state,) = manager.applied[-1]
    assert (state.leader, state.leader_epoch) == (2, 1)
    log.commit(PartitionChangeRecord(A, 0, replicas=(1, 3), isr=(1,), leader=1))
    assert [(s.topic, s.partition) for s in removed[-1]] == [("a", 0)]
    log.commit(TopicRecord("b", B), PartitionRecord(B, 0, (2,), (2,), 2))
    assert manager.applied[-1][0].topic == "b"
    log.commit(RemoveTopicRecord(B))
    assert [(s.topic, s.partition) for s in removed[-1]] == [("b", 0)]


def test_a_snapshot_load_publishes_the_whole_state() -> None:
    source = MetadataImage.EMPTY.apply_all(
        [*brokers(), TopicRecord("a", A), PartitionRecord(A, 0, (2, 3), (2, 3), 2)], 6
    )
    listener = MetadataListener()
    updates: list[MetadataUpdate] = []
    leaders: list[LeaderAndEpoch] = []
    listener.subscribe(updates.append, leaders.append)
    manager = ReplicaManager()
    ReplicaStatePublisher(3, manager).attach(listener)
    listener.handle_load_snapshot(Snapshot(OffsetAndEpoch(6, 1), encode_snapshot(source)))
    assert listener.image == source
    assert updates[-1].snapshot and updates[-1].changed_partitions() == [source.partition("a", 0)]
    assert manager.applied == [[source.partition("a", 0)]]
    assert updates[-1].changed_brokers() == dict(source.brokers)
    listener.handle_leader_change(LeaderAndEpoch(2, 4))
    assert leaders == [LeaderAndEpoch(2, 4)] and listener.leader == LeaderAndEpoch(2, 4)


def test_attach_publishes_what_the_image_already_holds() -> None:
    listener = MetadataListener(
        MetadataImage.EMPTY.apply_all(
            [*brokers(), TopicRecord("a", A), PartitionRecord(A, 0, (1,), (1,), 1)]
        )
    )
    manager = ReplicaManager()
    ReplicaStatePublisher(1, manager).attach(listener)
    assert [s.partition for s in manager.applied[0]] == [0]


def test_snapshot_counts_records_since() -> None:
    listener = MetadataListener()
    Log(listener).commit(*brokers())
    assert listener.records_since_snapshot == 3
    assert listener.snapshot_due(10) and not listener.snapshot_due(10_000)
    end_offset, payload = listener.snapshot()
    assert end_offset == 3 and payload == encode_snapshot(listener.image)
    assert listener.records_since_snapshot == 0 and not listener.snapshot_due(0)
