"""``MetadataListener``: keeps a :class:`MetadataImage` current from the Raft log.

It has the Raft core's ``RaftListener`` shape (``handle_commit``,
``handle_load_snapshot``, ``handle_leader_change``), so the quorum runner (or a
test's ``RaftDriver``) hands it events directly. Each committed entry payload is
one framed metadata record. After every commit or snapshot load it tells its
subscribers, in subscription order, with a :class:`MetadataUpdate` (the image
before and after, and the committed records with their offsets and epochs);
after a leader change, with the new ``LeaderAndEpoch``. The active controller
subscribes (to know what of its own committed), and so does the broker's
replica manager (for the partition states of its replicas).

A committed entry that does not decode, or does not apply, raises: every
replica holds the same entries, so the node cannot go on (as Kafka's faults).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from log_engine.metadata.image import MetadataImage, TopicImage
from log_engine.metadata.records import MetadataRecord, decode_record
from log_engine.metadata.snapshot import encode_snapshot, load_snapshot
from log_engine.metadata.types import BrokerInfo, PartitionState
from log_engine.replication.raft.types import Entry, LeaderAndEpoch, Snapshot


@dataclass(frozen=True, slots=True)
class CommittedRecord:
    """A record as committed: its log offset and the epoch of the leader that wrote it."""

    offset: int
    epoch: int
    record: MetadataRecord


@dataclass(frozen=True, slots=True)
class MetadataUpdate:
    """What one commit (or snapshot load) changed."""

    previous: MetadataImage
    image: MetadataImage
    records: tuple[CommittedRecord, ...] = ()
    snapshot: bool = False

    def changed_partitions(self) -> list[PartitionState]:
        """Partition states that are new or differ from before, by topic then index."""
        changed: list[PartitionState] = []
        before = self.previous.topics
        for name in sorted(self.image.topics):
            topic = self.image.topics[name]
            old: TopicImage | None = before.get(name)
            if old is topic:
                continue
            old_partitions = {} if old is None or old.topic_id != topic.topic_id else old.partitions
            for index in sorted(topic.partitions):
                state = topic.partitions[index]
                if old_partitions.get(index) != state:
                    changed.append(state)
        return changed

    def removed_partitions(self) -> list[PartitionState]:
        """States of partitions whose topic is gone (or replaced by one with another id)."""
        removed: list[PartitionState] = []
        for name, old in sorted(self.previous.topics.items()):
            topic = self.image.topics.get(name)
            if topic is None or topic.topic_id != old.topic_id:
                removed.extend(old.partitions[i] for i in sorted(old.partitions))
        return removed

    def changed_brokers(self) -> dict[int, BrokerInfo | None]:
        """Brokers whose info changed; ``None`` for an unregistered one."""
        before, after = self.previous.brokers, self.image.brokers
        if before is after:
            return {}
        out: dict[int, BrokerInfo | None] = {
            b: info for b, info in after.items() if before.get(b) != info
        }
        out.update((b, None) for b in before if b not in after)
        return out

    def partitions_of(self, broker_id: int) -> list[PartitionState]:
        """The changed partition states that ``broker_id`` is a replica of."""
        return [s for s in self.changed_partitions() if broker_id in s.replicas]


UpdateCallback = Callable[[MetadataUpdate], None]
LeaderCallback = Callable[[LeaderAndEpoch], None]


class MetadataListener:
    """The state machine above the metadata log (a ``RaftListener``)."""

    def __init__(self, image: MetadataImage = MetadataImage.EMPTY) -> None:
        self.image = image
        self.leader = LeaderAndEpoch(None, 0)
        self.records_since_snapshot = 0
        self.bytes_since_snapshot = 0
        self._on_update: list[UpdateCallback] = []
        self._on_leader: list[LeaderCallback] = []

    def subscribe(
        self, on_update: UpdateCallback, on_leader_change: LeaderCallback | None = None
    ) -> None:
        """Call ``on_update`` after each commit or snapshot load, ``on_leader_change`` after each
        leader change."""
        self._on_update.append(on_update)
        if on_leader_change is not None:
            self._on_leader.append(on_leader_change)

    # ---- RaftListener ---------------------------------------------------------------------

    def handle_commit(self, entries: tuple[Entry, ...], end_offset: int) -> None:
        committed = tuple(
            CommittedRecord(e.offset, e.epoch, decode_record(e.payload)) for e in entries
        )
        previous = self.image
        self.image = previous.apply_all((c.record for c in committed), end_offset)
        self.records_since_snapshot += len(committed)
        self.bytes_since_snapshot += sum(len(e.payload) for e in entries)
        self._notify(MetadataUpdate(previous, self.image, committed))

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        previous = self.image
        self.image = load_snapshot(snapshot.payload, snapshot.snapshot_id.offset)
        self.records_since_snapshot = self.bytes_since_snapshot = 0
        self._notify(MetadataUpdate(previous, self.image, snapshot=True))

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leader = leader
        for callback in self._on_leader:
            callback(leader)

    # ---- snapshots --------------------------------------------------------------------------

    def snapshot_due(self, max_bytes: int) -> bool:
        """Whether more than ``max_bytes`` of records were applied since the last snapshot
        (Kafka's ``metadata.log.max.record.bytes.between.snapshots``, 20 MiB by default)."""
        return self.bytes_since_snapshot > max_bytes

    def snapshot(self) -> tuple[int, bytes]:
        """``(end_offset, payload)`` of the current image, for ``create_snapshot``."""
        self.records_since_snapshot = self.bytes_since_snapshot = 0
        return self.image.end_offset, encode_snapshot(self.image)

    def _notify(self, update: MetadataUpdate) -> None:
        for callback in self._on_update:
            callback(update)
