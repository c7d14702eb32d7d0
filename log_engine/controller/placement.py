"""Replica placement for new topics: round robin over the unfenced brokers, random start.

Kafka's classic (rack-unaware) assignment: brokers sorted by id; partition p's
first replica is broker ``(start + p) mod n``; the followers come after it at
a shift that grows by one every ``n`` partitions, so the replicas of a topic's
leaders and followers spread over every broker. ``start`` and the initial
shift are random (from the controller's seeded ``random.Random``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence


class PlacementError(ValueError):
    """The request cannot be placed (carries Kafka's INVALID_REPLICATION_FACTOR)."""


def place_replicas(
    brokers: Sequence[int], num_partitions: int, replication_factor: int, rng: random.Random
) -> list[tuple[int, ...]]:
    """Replica lists, preferred leader first, for ``num_partitions`` partitions."""
    ordered = sorted(brokers)
    n = len(ordered)
    if replication_factor > n:
        raise PlacementError(
            f"replication factor {replication_factor} is larger than the {n} unfenced "
            f"broker(s) {ordered}: start more brokers or ask for a smaller factor"
        )
    start = rng.randrange(n)
    shift = rng.randrange(n)
    out: list[tuple[int, ...]] = []
    for p in range(num_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (start + p) % n
        replicas = [ordered[first]]
        for j in range(replication_factor - 1):
            offset = 1 + (shift + j) % (n - 1)
            replicas.append(ordered[(first + offset) % n])
        out.append(tuple(replicas))
    return out
