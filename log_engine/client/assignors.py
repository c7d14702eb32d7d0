"""Partition assignors: how a group leader splits partitions among consumers.

The two classic eager assignors, with Kafka's names and results, so a group
mixing our consumers with Java or librdkafka ones agrees on the protocol and
on who gets what:

- ``range``: per topic, the members subscribed to it (sorted by member id)
  get consecutive partition ranges; the first ``partitions % members``
  members get one extra.
- ``roundrobin``: every subscribed partition, sorted by topic then partition,
  dealt in turn to the members (sorted by member id), skipping members not
  subscribed to that topic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from log_engine.client.consumer_protocol import Subscription
from log_engine.client.types import TopicPartition


class Assignor(Protocol):
    """Computes an assignment from every member's subscription (run by the leader)."""

    name: str

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        """Map each member id to its partitions; topics missing from metadata are skipped."""
        ...


class RangeAssignor:
    """Consecutive partition ranges per topic (Kafka's ``range``)."""

    name = "range"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        members_per_topic: dict[str, list[str]] = {}
        for member, subscription in subscriptions.items():
            for topic in subscription.topics:
                members_per_topic.setdefault(topic, []).append(member)
        for topic, members in sorted(members_per_topic.items()):
            count = partitions_per_topic.get(topic)
            if not count:
                continue
            members = sorted(set(members))
            per_member, extra = divmod(count, len(members))
            for index, member in enumerate(members):
                start = per_member * index + min(index, extra)
                length = per_member + (1 if index < extra else 0)
                result[member] += (TopicPartition(topic, p) for p in range(start, start + length))
        return result


class RoundRobinAssignor:
    """All partitions dealt out in turn across members (Kafka's ``roundrobin``)."""

    name = "roundrobin"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        members = sorted(subscriptions)
        if not members:
            return result
        subscribed = {member: set(subscriptions[member].topics) for member in members}
        topics = sorted({t for topics in subscribed.values() for t in topics})
        turn = 0
        for topic in topics:
            for partition in range(partitions_per_topic.get(topic, 0)):
                for _ in range(len(members)):
                    member = members[turn % len(members)]
                    turn += 1
                    if topic in subscribed[member]:
                        result[member].append(TopicPartition(topic, partition))
                        break
        return result


ASSIGNORS: dict[str, type[RangeAssignor] | type[RoundRobinAssignor]] = {
    RangeAssignor.name: RangeAssignor,
    RoundRobinAssignor.name: RoundRobinAssignor,
}


def assignor_for(name: str) -> Assignor:
    """The assignor called ``name`` (``range`` or ``roundrobin``)."""
    try:
        return ASSIGNORS[name]()
    except KeyError:
        raise ValueError(f"unknown partition.assignment.strategy {name!r}") from None
