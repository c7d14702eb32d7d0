"""``ReplicaStatePublisher``: hands a broker's replica manager the states of its replicas.

The replica manager's contract (issue 17) is ``apply(states, brokers)``: it makes
this broker leader or follower of each partition state given and ignores a state
whose leader epoch is older than what it has. The publisher subscribes to a
:class:`MetadataListener` and, after each commit or snapshot load, passes the
partition states that changed and name this broker as a replica, with every
registered broker (followers need the leader's endpoint). Partitions of deleted
topics, and partitions this broker is no longer a replica of, go to an optional
``on_removed`` callback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.metadata.types import BrokerInfo, PartitionState


class ReplicaStateTarget(Protocol):
    """What the publisher drives (the broker's replica manager)."""

    def apply(self, states: Iterable[PartitionState], brokers: Mapping[int, BrokerInfo]) -> None:
        """Become leader or follower of each state's partition."""
        ...


class ReplicaStatePublisher:
    """Publishes the partition states of ``broker_id``'s replicas to ``target``."""

    def __init__(
        self,
        broker_id: int,
        target: ReplicaStateTarget,
        on_removed: Callable[[list[PartitionState]], None] | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.target = target
        self.on_removed = on_removed

    def attach(self, listener: MetadataListener) -> None:
        """Publish what ``listener``'s image holds now, then every change."""
        image = listener.image
        states = [s for s in image.partitions() if self.broker_id in s.replicas]
        if states:
            self.target.apply(states, image.brokers)
        listener.subscribe(self.on_update)

    def on_update(self, update: MetadataUpdate) -> None:
        changed = update.changed_partitions()
        mine = [s for s in changed if self.broker_id in s.replicas]
        if mine:
            self.target.apply(mine, update.image.brokers)
        if self.on_removed is None:
            return
        removed = [s for s in update.removed_partitions() if self.broker_id in s.replicas]
        previous = update.previous
        for state in changed:  # reassigned away from this broker
            old = previous.partition(state.topic, state.partition)
            if (
                old is not None
                and state.topic_id == old.topic_id
                and self.broker_id in old.replicas
                and self.broker_id not in state.replicas
            ):
                removed.append(state)
        if removed:
            self.on_removed(removed)
