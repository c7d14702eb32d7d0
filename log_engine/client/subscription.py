"""What a consumer reads: its subscription, its assigned partitions and their positions.

Two offsets per partition: ``position`` is the next offset poll() hands to the
application (what commits store), ``fetch_offset`` the next offset to request
from the broker; with prefetching the fetch offset runs ahead. ``epoch``
increases on every seek or reset, so fetch responses requested before it are
recognised and dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from log_engine.client.types import OffsetAndMetadata, TopicPartition


@dataclass(slots=True)
class PartitionState:
    """Per assigned partition: positions, pause flag, pending reset, last watermarks."""

    position: int | None = None
    fetch_offset: int | None = None
    epoch: int = 0
    paused: bool = False
    reset_to: str | None = None  # "earliest" / "latest" / a reset that is pending
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    @property
    def has_position(self) -> bool:
        return self.position is not None and self.fetch_offset is not None

    def seek(self, offset: int) -> None:
        self.position = offset
        self.fetch_offset = offset
        self.reset_to = None
        self.epoch += 1


class SubscriptionState:
    """The consumer's subscription (topics, via a group) or manual assignment."""

    def __init__(self, default_reset: str) -> None:
        self.default_reset = default_reset
        self.topics: tuple[str, ...] = ()
        self.manual = False
        self.assignment: dict[TopicPartition, PartitionState] = {}

    @property
    def subscribed(self) -> bool:
        """Whether partitions come from group membership (``subscribe``)."""
        return bool(self.topics) and not self.manual

    def subscribe(self, topics: Iterable[str]) -> None:
        if self.manual and self.assignment:
            raise ValueError("subscribe() after assign(): call unsubscribe() first")
        self.topics = tuple(sorted(set(topics)))
        self.manual = False

    def assign_manually(self, partitions: Iterable[TopicPartition]) -> None:
        if self.subscribed:
            raise ValueError("assign() after subscribe(): call unsubscribe() first")
        self.manual = True
        self._set_assignment(partitions)

    def assign_from_group(self, partitions: Iterable[TopicPartition]) -> None:
        self._set_assignment(partitions)

    def unsubscribe(self) -> None:
        self.topics = ()
        self.manual = False
        self.assignment = {}

    def _set_assignment(self, partitions: Iterable[TopicPartition]) -> None:
        wanted = list(dict.fromkeys(partitions))
        self.assignment = {tp: self.assignment.get(tp) or PartitionState() for tp in wanted}

    def state(self, tp: TopicPartition) -> PartitionState:
        """The state of an assigned partition; ValueError if it is not assigned."""
        try:
            return self.assignment[tp]
        except KeyError:
            raise ValueError(f"{tp} is not assigned to this consumer") from None

    def fetchable(self) -> list[TopicPartition]:
        """Assigned, not paused, with a position."""
        return [
            tp for tp, s in self.assignment.items() if not s.paused and s.fetch_offset is not None
        ]

    def missing_positions(self) -> list[TopicPartition]:
        """Assigned partitions with neither a position nor a reset in progress."""
        return [tp for tp, s in self.assignment.items() if s.position is None]

    def consumed_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """The offsets a commit of everything consumed would store."""
        return {
            tp: OffsetAndMetadata(s.position)
            for tp, s in self.assignment.items()
            if s.position is not None
        }
